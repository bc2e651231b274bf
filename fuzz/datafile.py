"""The one way in for a file that someone else wrote: a program file, a corpus
entry's files (fuzz/findings/store/corpus_files.py), a campaign's state files
(fuzz/campaign/state_files.py) and the scripts and reports an entry stores.

A file is opened without blocking (a FIFO or a device would wait forever for
a writer) and read only when fstat says it is a regular file; never through a
symlink where the caller says so (corpus and state files: a link could show
any file of the machine). It is size-capped before it is decoded. JSON is then
parsed with limits: no duplicate key (the json module keeps the last one
silently, so two readers could see two different files), no integer of more
than MAX_DIGITS digits (Python refuses 4300 with a plain ValueError, and
converting one costs quadratic time), no number text longer than
MAX_NUMBER_CHARS, no nesting deeper than MAX_DEPTH. The kind's schema is the
caller's to check, with fuzz/program/schema.py's checker. Every failure is a
DataFileError whose text names the file and says why, in one line.

tests/test_one_way_in.py scans the package for any other read of a file.
"""

from __future__ import annotations

import json
import os
import stat

MAX_DIGITS = 64  # digits of an integer: shapefuzz writes none over 20 (2**63)
MAX_NUMBER_CHARS = 400  # characters of a number's text (a float with its exponent)
MAX_DEPTH = 64  # nesting of lists and objects: shapefuzz's deepest file (a meta.json) nests 7 deep


class DataFileError(ValueError):
    """A data file that cannot be read as JSON of its kind (one line: the file, then why)."""


def _no_duplicates(pairs: list) -> dict:
    d = {}
    for k, v in pairs:
        if k in d:
            raise DataFileError(f"duplicate key {json.dumps(k)[:80]}")
        d[k] = v
    return d


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise DataFileError(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise DataFileError(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    return float(text)


def depth(doc, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a JSON value (a scalar is 0), counted no further than limit + 1."""
    deepest, stack = 0, [(doc, 0)]
    while stack and deepest <= limit:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return deepest


def loads(text: str | bytes, max_depth: int = MAX_DEPTH):
    """JSON text -> value; DataFileError (no file named) on bad JSON, a duplicate key, an integer of too many
    digits or too deep a nesting."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        doc = json.loads(text, object_pairs_hook=_no_duplicates, parse_int=_int, parse_float=_float)
    except RecursionError:
        raise DataFileError(f"nested more than {max_depth} deep") from None
    except json.JSONDecodeError as e:
        raise DataFileError(f"not valid JSON: {e}") from None
    except UnicodeDecodeError as e:
        raise DataFileError(f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except (ValueError, OverflowError) as e:  # DataFileError from the hooks among them
        raise DataFileError(str(e) if isinstance(e, DataFileError) else f"not valid JSON: {e}") from None
    if depth(doc, max_depth) > max_depth:
        raise DataFileError(f"nested more than {max_depth} deep")
    return doc


_KIND_OF_FILE = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def not_regular(mode: int) -> str | None:
    """What a file of st_mode `mode` is when it is not a regular file, or None."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KIND_OF_FILE if test(mode)), "not a regular file")


def read_bytes(path, max_bytes: int, follow_symlinks: bool = True, offset: int = 0) -> bytes:
    """The bytes of regular file `path` (from `offset` on), at most max_bytes in all; follow_symlinks=False
    refuses a link.
    DataFileError naming the file otherwise. Opening never blocks (O_NONBLOCK) and nothing is read before
    fstat says the file is a regular one."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        why = "is a symlink (a corpus or state dir holds plain files)" if not follow_symlinks and os.path.islink(path) \
            else f"cannot read: {e.strerror or e}"
        raise DataFileError(f"{path}: {why}") from None
    try:
        st = os.fstat(fd)
        what = not_regular(st.st_mode)
        if what:
            raise DataFileError(f"{path}: is {what}, not a regular file")
        if st.st_size > max_bytes:
            raise DataFileError(f"{path}: larger than the limit of {max_bytes} bytes for this kind of file")
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        chunks, left = [], max_bytes + 1 - offset
        while left > 0:  # a file that grows while it is read is cut at the cap, never read on
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        raise DataFileError(f"{path}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if offset + len(data) > max_bytes:
        raise DataFileError(f"{path}: larger than the limit of {max_bytes} bytes for this kind of file")
    return data


def read_text(path, max_bytes: int, follow_symlinks: bool = True, errors: str = "strict") -> str:
    """A UTF-8 text file of at most max_bytes (see read_bytes); errors="replace" keeps a file that is not
    UTF-8 readable. DataFileError naming the file otherwise."""
    data = read_bytes(path, max_bytes, follow_symlinks)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as e:
        raise DataFileError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_json(path, max_bytes: int, follow_symlinks: bool = True, max_depth: int = MAX_DEPTH):
    """The JSON value of a file of at most max_bytes (see read_bytes and loads); DataFileError naming the
    file otherwise."""
    data = read_bytes(path, max_bytes, follow_symlinks)
    try:
        return loads(data, max_depth)
    except DataFileError as e:
        raise DataFileError(f"{path}: {e}") from None


def exists(path) -> bool:
    """Whether anything is at `path`, a dangling symlink included (reading it then says what it is)."""
    return os.path.lexists(path)
