"""The one loader of the JSON files a corpus holds other than programs:
an entry's meta.json, verdict.json (also original_verdict.json and
variants/*/verdict.json), signature.json, env.json and ablation.json, and the
corpus's .index.json, known_issues.json and .reference.json.

Each kind has a schema in corpus_files.json beside this module, checked with
the program schema's checker (fuzz/program/schema.py). A file is read only if
it is a plain file (never through a symlink), no larger than its kind's cap,
holds no duplicate key, no more values and no deeper nesting than its cap; a
file that breaks any of these is a CorpusFileError: one line naming the file
and the field. Program files go through fuzz/program/schema.json, read here
with the same size cap and symlink rule.

Paths are checked here too: an entry is a real directory directly inside its
corpus (or its unconfirmed/), and every write into a corpus lands inside it
with no symlinked directory on the way (`inside`, fuzz/files.py `confined`).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from fuzz.datafile import DataFileError, read_json
from fuzz.files import UnsafePath, confined
from fuzz.program.schema import MAX_PROGRAM_BYTES, check

UNCONFIRMED = "unconfirmed"  # entries that do not fail alone in a fresh process (findings/standalone.py)
KNOWN = "known"  # entries of causes the corpus's reference corpus holds (findings/reference.py)
SET_ASIDE = (UNCONFIRMED, KNOWN)  # kept whole and still hit, but no entries of this corpus

SCHEMA_PATH = Path(__file__).with_name("corpus_files.json")

# file name -> (schema definition, bytes, JSON values): caps far above what shapefuzz writes
# (the corpus's largest meta.json is 5 KB), so a hostile file is refused before it costs time.
KINDS = {
    "meta.json": ("meta", 8_000_000, 400_000),
    "verdict.json": ("verdict", 2_000_000, 20_000),
    "original_verdict.json": ("verdict", 2_000_000, 20_000),
    "signature.json": ("signature", 100_000, 64),
    "env.json": ("env", 100_000, 1_000),
    "ablation.json": ("ablation", 8_000_000, 400_000),
    ".index.json": ("index", 64_000_000, 2_100_000),
    "known_issues.json": ("known_issues", 4_000_000, 400_000),
    ".reference.json": ("reference", 100_000, 16),
}


# The text files a corpus stores (never run), and the bytes each may hold before it is read: a 1 GiB sparse
# repro.py is refused unread. shapefuzz's largest repro.py is 9 KB, its largest report.md 10 KB.
TEXT_KINDS = {"repro.py": 1_000_000, "harness.py": 1_000_000, "report.md": 2_000_000, "sanitizer.txt": 1_000_000,
              "BUGS.md": 16_000_000, "trace.json": 1_000_000}


class CorpusFileError(DataFileError):
    """A corpus file that is not of its kind (one line: the file, the field, why)."""


@lru_cache(maxsize=1)
def schema() -> dict:
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def kind_of(path) -> str:
    name = Path(path).name
    if name not in KINDS:
        raise ValueError(f"{path}: not a corpus file kind this loader knows")
    return name


def violation(doc, kind: str) -> str | None:
    """Why `doc` is not a file of kind `kind` (a file name of KINDS), naming the field; None if it is."""
    definition, _, max_values = KINDS[kind]
    root = schema()
    return check(doc, root["$defs"][definition], root, "the file", max_values)


def read(path, kind: str | None = None):
    """The checked JSON of corpus file `path` (its kind by its name unless given); CorpusFileError naming
    the file and the field otherwise."""
    kind = kind or kind_of(path)
    try:
        doc = read_json(path, KINDS[kind][1], follow_symlinks=False)
    except DataFileError as e:
        raise CorpusFileError(str(e)) from None
    why = violation(doc, kind)
    if why:
        raise CorpusFileError(f"{path}: {why.removeprefix('the file: ')}")
    return doc


def read_program_json(path) -> dict:
    """A stored program's JSON (checked by its own schema when it is loaded): size-capped, never a symlink,
    duplicate keys refused."""
    try:
        return read_json(path, MAX_PROGRAM_BYTES, follow_symlinks=False)
    except DataFileError as e:
        raise CorpusFileError(str(e)) from None


def read_stored_text(path, kind: str | None = None) -> str:
    """A text file an entry stores (TEXT_KINDS, by its name unless `kind` is given), read through the one loader:
    a plain file, never a symlink, size-capped, not-UTF-8 bytes replaced. CorpusFileError naming it otherwise."""
    from fuzz.datafile import read_text

    try:
        return read_text(path, TEXT_KINDS[kind or Path(path).name], follow_symlinks=False, errors="replace")
    except DataFileError as e:
        raise CorpusFileError(str(e)) from None


def read_checked_text(path) -> str:
    """A corpus JSON file's text (to copy it byte for byte) once it reads as a file of its kind: a program file
    by its name (program.json, original_program.json: parsed here, its schema checked when it is loaded), else
    a KINDS file. CorpusFileError naming the file otherwise."""
    from fuzz.datafile import loads, read_text

    name = Path(path).name
    program = name.endswith("program.json")
    try:
        text = read_text(path, MAX_PROGRAM_BYTES if program else KINDS[kind_of(path)][1], follow_symlinks=False)
        doc = loads(text)
    except DataFileError as e:
        raise CorpusFileError(e if str(e).startswith(str(path)) else f"{path}: {e}") from None
    why = None if program else violation(doc, kind_of(path))
    if why:
        raise CorpusFileError(f"{path}: {why.removeprefix('the file: ')}")
    return text


# -- paths ------------------------------------------------------------------------------

class OutsideCorpus(UnsafePath):
    """A write that would land outside its corpus (a symlinked entry or subdirectory, an index target that is a
    path)."""


def is_entry_dir(d) -> bool:
    """A real directory (not a symlink to one)."""
    return os.path.isdir(d) and not os.path.islink(d)


def corpus_of(entry_dir) -> Path:
    """The corpus an entry dir belongs to: its parent, or the corpus of a set-aside dir (unconfirmed/, known/)."""
    parent = Path(entry_dir).absolute().parent
    return parent.parent if parent.name in SET_ASIDE else parent


def inside(corpus_root, path) -> Path:
    """`path`, after checking that it lies inside corpus_root with no symlinked directory on the way, and that
    it resolves there: OutsideCorpus otherwise. Every write into a corpus asks this first."""
    try:
        confined(corpus_root, path)
    except UnsafePath as e:
        raise OutsideCorpus(str(e)) from None
    root, real = os.path.realpath(corpus_root), os.path.realpath(os.path.dirname(os.path.abspath(path)))
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        raise OutsideCorpus(f"{path}: resolves to {real}, outside the corpus {corpus_root} (a symlink?); "
                            "nothing is written there")
    return Path(path)


def entry_inside(entry_dir) -> Path:
    """An entry dir to write into: a real directory (no symlink) whose files land inside its corpus (its
    parent, or the corpus of a set-aside dir, itself no symlink either)."""
    d = Path(entry_dir)
    if os.path.islink(d):
        raise OutsideCorpus(f"{d}: is a symlink; a corpus entry is a real directory, nothing is written there")
    inside(corpus_of(d), d / "meta.json")
    return d
