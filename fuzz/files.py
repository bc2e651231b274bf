"""Durable file writes, one implementation for the whole package.

Corpus entries, campaign state, ablations and reports are read while other
processes write them and must survive a kill at any moment, so a file is
replaced atomically: written to a temp file in the same directory, fsynced,
os.replace'd over the old one, then the directory is fsynced so the rename
itself is on disk. Readers see the old file or the new one, never a torn one.

Every path written, moved or deleted in a corpus or a state dir is first
confined to that root (`confined`): no directory on the way from the root is a
symlink, so a symlinked subdirectory someone planted (CORPUS/unconfirmed,
ENTRY/variants, STATE/programs) is refused, never written through. The last
component may be a symlink: write_atomic replaces it, unlink removes it, and
`open_regular` (appends, locks) never follows one nor opens a FIFO.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

# mkstemp creates 0600 files; corpus entries and reports are for everyone to read.
FILE_MODE = 0o644


class UnsafePath(OSError):
    """A path a write refuses: outside its root, through a symlinked directory, or not a regular file."""


def confined(root, path) -> Path:
    """`path`, after checking that it lies under `root` (itself, or below it) and that no directory on the way
    from root to it is a symlink (the root itself may be one: it is the user's). UnsafePath otherwise."""
    top, p = os.path.abspath(root), os.path.abspath(path)
    rel = os.path.relpath(p, top)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise UnsafePath(f"{path}: outside {root}; nothing is written there")
    here = top
    for part in ([] if rel == os.curdir else rel.split(os.sep))[:-1]:
        here = os.path.join(here, part)
        if os.path.islink(here):
            raise UnsafePath(f"{here}: is a symlink, so writing {path} would leave {root}; nothing is written "
                             "there (a corpus or state dir holds real directories)")
    return Path(path)


def open_regular(path, flags: int, mode: int = 0o644) -> int:
    """A descriptor of regular file `path` opened with `flags` (os.O_*): never through a symlink at its last
    component, never blocking on a FIFO, never a device or a directory (UnsafePath)."""
    import stat

    import errno

    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO):  # a symlink; a FIFO nobody reads
            raise UnsafePath(e.errno, f"{path}: is {'a symlink' if e.errno == errno.ELOOP else 'a FIFO'}, not a "
                             "regular file; nothing is read or written there") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath(f"{path}: is not a regular file; nothing is read or written there")
    return fd


def append_line(path, line: str, sync: bool) -> None:
    """Append one line (a single write) to regular file `path`, made when missing (see open_regular)."""
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line.encode("utf-8"))
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


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
