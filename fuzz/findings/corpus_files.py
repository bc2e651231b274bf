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
corpus, and every write into a corpus lands inside it (`inside`).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from fuzz.datafile import DataFileError, read_json
from fuzz.program.schema import MAX_PROGRAM_BYTES, check

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


# -- paths ------------------------------------------------------------------------------

class OutsideCorpus(OSError):
    """A write that would land outside its corpus (a symlinked entry, an index target that is a path)."""


def is_entry_dir(d) -> bool:
    """A real directory (not a symlink to one)."""
    return os.path.isdir(d) and not os.path.islink(d)


def inside(corpus_root, path) -> Path:
    """`path`, after checking it lies inside corpus_root once every symlink on the way is resolved:
    OutsideCorpus otherwise. Every write into a corpus asks this first."""
    root = os.path.realpath(corpus_root)
    real = os.path.realpath(path)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        raise OutsideCorpus(f"{path}: resolves to {real}, outside the corpus {corpus_root} (a symlink?); "
                            "nothing is written there")
    return Path(path)


def entry_inside(entry_dir) -> Path:
    """An entry dir to write into: a real directory (no symlink) whose files land inside its corpus (its
    parent, or the corpus of unconfirmed/)."""
    d = Path(entry_dir)
    if os.path.islink(d):
        raise OutsideCorpus(f"{d}: is a symlink; a corpus entry is a real directory, nothing is written there")
    return inside(d.absolute().parent, d)
