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


def existing_ancestor(path) -> str:
    """`path` (absolute) if it exists, else its nearest parent that does."""
    d = os.path.abspath(path)
    while not os.path.exists(d):
        d = os.path.dirname(d)
    return d


def free_bytes(path) -> int:
    """Free bytes for this user on the filesystem of `path` (or of its nearest existing parent)."""
    st = os.statvfs(existing_ancestor(path))
    return st.f_bavail * st.f_frsize


def check_writable_dir(path) -> None:
    """Whether directory `path` can be written, or made: a probe file is
    written and removed in it, or in its nearest existing ancestor when it is
    missing (nothing is created; a permission check would pass for root on a
    read-only mount). Raises OSError saying why not."""
    import errno
    import tempfile

    d = existing_ancestor(path)
    if not os.path.isdir(d):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), d)
    fd, probe = tempfile.mkstemp(prefix=".probe-", dir=d)
    os.close(fd)
    os.unlink(probe)


def tree_bytes(path) -> int:
    """Bytes of the files under `path` (0 when it is missing); files that go
    while it counts are skipped (a campaign may be running there)."""
    total, stack = 0, [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        elif e.is_file(follow_symlinks=False):
                            total += e.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        except OSError:
            continue
    return total


def disk_use(state_dir) -> dict:
    """A state dir's bytes on disk, its workers' compile caches among them,
    and the free bytes of its filesystem (for `stats`)."""
    return {"state_dir_bytes": tree_bytes(state_dir),
            "worker_caches_bytes": tree_bytes(os.path.join(state_dir, "workers")),
            "free_bytes": free_bytes(state_dir)}


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"
