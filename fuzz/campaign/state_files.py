"""The one loader of a campaign state dir's files (fuzz/campaign/state.py
lists them): config.json and state.json, and the logs, one JSON record a line.

A state dir may come from someone else, so its files are data like a
corpus's: each is read through fuzz/datafile.py (a regular file, never
through a symlink, size-capped, integers and nesting bounded) and each record
is checked against its kind's schema in state_files.json beside this module.
A file that fails is a StateError: one line naming the file (and the line).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from fuzz.campaign.errors import StateError
from fuzz.datafile import DataFileError, exists, loads, read_bytes, read_json
from fuzz.program.schema import MAX_PROGRAM_BYTES, check

SCHEMA_PATH = Path(__file__).with_name("state_files.json")

# A log line: a case's record is about 200 bytes, a pool line holds a program.
MAX_LINE_BYTES = MAX_PROGRAM_BYTES + 100_000
# A log: an 8-hour campaign of 16 workers writes about 100 MB of cases.jsonl.
MAX_LOG_BYTES = 4_000_000_000

# file name -> (schema definition, bytes, JSON values of one document or record)
KINDS = {
    "config.json": ("config", 1_000_000, 20_000),
    "state.json": ("snapshot", 16_000_000, 400_000),
    "cases.jsonl": ("case", MAX_LOG_BYTES, 2_000),
    "findings.jsonl": ("finding", MAX_LOG_BYTES, 2_000),
    "batches.jsonl": ("batch", MAX_LOG_BYTES, 200_000),
    "pool.jsonl": ("pool", MAX_LOG_BYTES, 200_000),
    "guide.jsonl": ("guide", MAX_LOG_BYTES, 16),
    "jobs.jsonl": ("job_event", MAX_LOG_BYTES, 2_000),
}
LOGS = tuple(k for k in KINDS if k.endswith(".jsonl"))
MAX_COVERAGE_BYTES = 1_000_000_000  # coverage.txt: a line per compiler line reached (a few MB)


def default_corpus(state_dir: str) -> str:
    """Where a campaign without --corpus saves its findings: beside its state."""
    return os.path.join(state_dir, "corpus")


# what a campaign writes into under its state dir (its default corpus among them)
WRITTEN = ("lock", "cases.jsonl", "findings.jsonl", "batches.jsonl", "pool.jsonl", "guide.jsonl", "jobs.jsonl",
           "coverage.txt", "followup.lock", "followup.log", "programs", "workers", "followup-cache", "corpus")


def no_symlinked_dirs(state_dir: str) -> None:
    """StateError when a file or directory a campaign writes into is a symlink: its writes would leave the
    state dir."""
    for name in WRITTEN:
        if os.path.islink(os.path.join(state_dir, name)):
            raise StateError(f"{os.path.join(state_dir, name)} is a symlink; a state dir holds real files and "
                             "directories, and nothing is written through a link: remove it")


def other_corpus(state_dir: str, corpus: str | None) -> str | None:
    """Why state_dir cannot go on with `corpus` (None: its default one) when its snapshot names another
    corpus, with the flag that would; None when it can. The recorded path is only named, never written to
    (a state dir is data: the command line says where the corpus is)."""
    try:
        snap = read_document(os.path.join(state_dir, "state.json"), "") or {}
    except StateError:
        return None  # the state dir's own check names it
    recorded, used = snap.get("corpus_dir"), os.path.abspath(corpus or default_corpus(state_dir))
    if not isinstance(recorded, str) or os.path.abspath(recorded) == used:
        return None
    return (f"{state_dir} saved its findings in {recorded!r}, not in {used!r}; "
            f"go on with --corpus naming that dir")


@lru_cache(maxsize=1)
def schema() -> dict:
    with open(SCHEMA_PATH, encoding="utf-8") as f:  # the package's own file, not data
        return json.load(f)


def violation(doc, name: str, whole: str = "the file") -> str | None:
    """Why `doc` is not a document (or record) of state file `name`, naming the field; None if it is."""
    definition, _, max_values = KINDS[name]
    root = schema()
    return check(doc, root["$defs"][definition], root, whole, max_values)


def read_document(path, fix: str) -> dict | None:
    """config.json or state.json, checked; None when absent. StateError naming the file and `fix` otherwise."""
    name = os.path.basename(path)
    if not exists(path):
        return None
    try:
        doc = read_json(path, KINDS[name][1], follow_symlinks=False)
    except DataFileError as e:
        raise StateError(f"{path} is corrupt ({str(e).removeprefix(f'{path}: ')}); {fix}") from None
    if not isinstance(doc, dict):
        raise StateError(f"{path} is corrupt (not a JSON object); {fix}")
    why = violation(doc, name)
    if why:
        raise StateError(f"{path} is corrupt ({why.removeprefix('the file: ')}); {fix}")
    return doc


def read_log_bytes(path, offset: int = 0) -> bytes:
    """A log's bytes from `offset` on (b"" when it is missing); StateError when it is no regular file, a
    symlink or over its cap."""
    if not exists(path):
        return b""
    try:
        return read_bytes(path, KINDS[os.path.basename(path)][1], follow_symlinks=False, offset=offset)
    except DataFileError as e:
        raise StateError(str(e)) from None


def record(line: bytes, name: str):
    """The checked record of one line of log `name`, or the reason it is none (a str)."""
    if len(line) > MAX_LINE_BYTES:
        return f"longer than {MAX_LINE_BYTES} bytes"
    try:
        rec = loads(line)
    except DataFileError as e:
        return str(e)
    if not isinstance(rec, dict):
        return "not a JSON object"
    return violation(rec, name, "the record") or rec


def read_log(path) -> list[dict]:
    """The records of a log; StateError naming the line for a bad one other than a torn last one (a kill
    mid-write: dropped, and judged again on resume)."""
    lines = read_log_bytes(path).split(b"\n")
    lines.pop()  # b"" after a final newline; else a line a kill cut short
    name, out = os.path.basename(path), []
    for n, line in enumerate(lines, 1):
        rec = record(line, name)
        if isinstance(rec, str):
            raise StateError(f"{path}: line {n} is not a record of this log ({rec}: {line[:60]!r}); "
                             "the file is corrupt: fix or remove that line")
        out.append(rec)
    return out


def read_coverage(path) -> set:
    """coverage.txt's lines (a torn last one left out: reached again); StateError when it cannot be read."""
    if not exists(path):
        return set()
    try:
        text = read_bytes(path, MAX_COVERAGE_BYTES, follow_symlinks=False).decode("utf-8", errors="replace")
    except DataFileError as e:
        raise StateError(str(e)) from None
    lines = text.split("\n")
    lines.pop()
    return set(lines)
