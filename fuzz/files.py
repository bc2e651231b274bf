"""Durable file writes, one implementation for the whole package.

Corpus entries, campaign state, ablations and reports are read while other
processes write them and must survive a kill at any moment, so a file is
replaced atomically: written to a temp file in the same directory, fsynced,
os.replace'd over the old one, then the directory is fsynced so the rename
itself is on disk. Readers see the old file or the new one, never a torn one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

# mkstemp creates 0600 files; corpus entries and reports are for everyone to read.
FILE_MODE = 0o644


def fsync_dir(path) -> None:
    """Flush a directory's entries (a rename or a new file in it) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_synced(path, text: str) -> None:
    """Write and fsync in place: only for files nobody reads yet (inside a
    temp directory that is renamed into place once complete)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def write_atomic(path, text: str) -> None:
    """Replace `path` by `text` atomically and durably (see the module docstring)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def dumps(obj) -> str:
    """JSON as the corpus stores it: indented, sorted keys (stable diffs), a final newline."""
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"
