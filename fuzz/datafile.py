"""Reading a JSON file that someone else wrote: a program file, a corpus
entry's files, a corpus's index and known-issues rules (fuzz/findings/corpus_files.py).

The file is size-capped before it is parsed, duplicate keys are refused (the
json module keeps the last one silently, so two readers could see two
different files), and nesting too deep for the parser is one line too. Every
failure is a DataFileError whose text names the file and says why, in one line.
"""

from __future__ import annotations

import json
import os


class DataFileError(ValueError):
    """A data file that cannot be read as JSON of its kind (one line: the file, then why)."""


def _no_duplicates(pairs: list) -> dict:
    d = {}
    for k, v in pairs:
        if k in d:
            raise DataFileError(f"duplicate key {json.dumps(k)[:80]}")
        d[k] = v
    return d


def loads(text: str):
    """JSON text -> value; DataFileError (no file named) on bad JSON, a duplicate key or too deep a nesting."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise DataFileError("nested too deeply") from None
    except json.JSONDecodeError as e:
        raise DataFileError(f"not valid JSON: {e}") from None


def read_text(path, max_bytes: int, follow_symlinks: bool = True) -> str:
    """A text file of at most max_bytes; follow_symlinks=False refuses a link (corpus files: a link
    could show any file of the machine in a report). DataFileError naming the file otherwise."""
    flags = os.O_RDONLY | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        why = "is a symlink (a corpus holds plain files)" if not follow_symlinks and os.path.islink(path) \
            else f"cannot read: {e.strerror or e}"
        raise DataFileError(f"{path}: {why}") from None
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(max_bytes + 1)
        except OSError as e:  # a directory, a device that fails
            raise DataFileError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise DataFileError(f"{path}: larger than the limit of {max_bytes} bytes for this kind of file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataFileError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_json(path, max_bytes: int, follow_symlinks: bool = True):
    """The JSON value of a file of at most max_bytes (see read_text); DataFileError naming the file otherwise."""
    text = read_text(path, max_bytes, follow_symlinks)
    try:
        return loads(text)
    except DataFileError as e:
        raise DataFileError(f"{path}: {e}") from None
