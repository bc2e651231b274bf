"""Inductor's precompiled C++ header, kept once per machine rather than made once per run.

Inductor-CPU precompiles a header of about 150 MB before its first C++ kernel (minutes on a loaded
2-core machine) and keeps it under `<TMPDIR>/torchinductor_<user>/precompiled_headers`, a path it fixes
when torch._inductor.codecache is imported. shapefuzz points every compiling process's TMPDIR at a
scratch dir of its own, so that header was made again by each campaign, each follow-up runner and each
`check`, and a process that used the system TMPDIR left it there.

Here that path is a link into shapefuzz's cache dir (fuzz/releases.py cache_dir(): SHAPEFUZZ_CACHE, default
~/.cache/shapefuzz), one dir per torch release and C++ compiler, so the header is built once per machine
and every later process (a second campaign's first case) finds it. Inductor names the header by a hash
of the preprocessed source, the command line and the compiler version and takes a file lock while it
builds one, so processes and campaigns can share a dir safely. Dirs of releases not used for 30 days are
pruned when a new one is made; `stats` and the cache limit count the dir in use.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import getpass
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from fuzz.releases import cache_dir

UNUSED_FOR = 30 * 24 * 3600  # a release's header dir untouched this long goes when another is made
# Each compile command line has a header of its own (a triage's C++ flags make another): past this the kept
# dir takes no more, and a process that would add one makes it in its own scratch dir, gone with it.
# The campaign's cache limit reserves this much (fuzz/campaign/disk.py).
CAP = 400 * 10**6


def _torch_release() -> str:
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "none"


@functools.lru_cache(maxsize=None)
def _compiler_id() -> str:
    """A short id of the C++ compiler Inductor calls (CXX, else c++): its version line, hashed."""
    cxx = os.environ.get("CXX") or "c++"
    try:
        r = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
        line = (r.stdout or "").splitlines()[0] if r.stdout else cxx
    except (OSError, subprocess.TimeoutExpired, IndexError):
        line = cxx
    return hashlib.sha256(line.encode()).hexdigest()[:10]


def home(torch_release: str | None = None) -> Path:
    """The header dir for a torch release (default: the installed one) and this machine's compiler."""
    release = re.sub(r"[^A-Za-z0-9.+_-]", "_", torch_release or _torch_release())
    return cache_dir() / "inductor-pch" / f"torch-{release}-cxx-{_compiler_id()}"


def inductor_dir(tmpdir: str) -> str:
    """Where Inductor keeps its precompiled header under TMPDIR `tmpdir` (torch's default_cache_dir)."""
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):  # a uid with no name (containers): as torch names it
        user = f"uid_{os.getuid()}" if hasattr(os, "getuid") else "unknown_user"
    return os.path.join(tmpdir, "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user), "precompiled_headers")


def link(tmpdir: str, torch_release: str | None = None) -> Path | None:
    """Make Inductor's header path under `tmpdir` a link to the kept dir (made and pruned as needed).
    Returns the kept dir, or None where it cannot be made (a read-only home: the header is then made
    under `tmpdir` as before, and goes with it)."""
    from fuzz.files import tree_bytes

    kept = home(torch_release)
    try:
        if not kept.is_dir():
            kept.mkdir(parents=True, exist_ok=True)
            prune(keep=kept)
        elif tree_bytes(kept) > CAP:
            return None
        os.utime(kept)  # in use: kept from pruning
        target = inductor_dir(tmpdir)
        if os.path.islink(target) and os.readlink(target) == str(kept):
            return kept
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.islink(target) or os.path.isfile(target):
            os.unlink(target)
        elif os.path.isdir(target):
            shutil.rmtree(target)  # a header made before the link: the kept one serves from now on
        os.symlink(kept, target)
    except OSError:
        return None
    return kept


def prune(keep: Path, now: float | None = None) -> list[Path]:
    """Remove the header dirs beside `keep` not used for UNUSED_FOR seconds; the ones removed."""
    now = time.time() if now is None else now
    gone = []
    with contextlib.suppress(OSError):
        for d in keep.parent.iterdir():
            if d != keep and d.is_dir() and not d.is_symlink() and now - d.stat().st_mtime > UNUSED_FOR:
                shutil.rmtree(d, ignore_errors=True)
                gone.append(d)
    return gone


def kept_bytes(torch_release: str | None = None) -> int:
    """The bytes of the header dir in use (0 when there is none)."""
    from fuzz.files import tree_bytes

    d = home(torch_release)
    return tree_bytes(d) if d.is_dir() else 0


def fresh_tmpdir(path: str) -> str:
    """`path` made an empty scratch dir (what was there is of no use) whose header path is linked."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    link(path)
    return path


def linked(tmpdir: str) -> bool:
    """Whether Inductor's header path under `tmpdir` is a link already (a campaign's scratch dir)."""
    return os.path.islink(inductor_dir(tmpdir))


_children_tmp: list = []


def children_tmpdir() -> str:
    """A TMPDIR for the processes this one starts (repro scripts, `python -m fuzz` children) whose header
    path is linked to the kept dir: this process's own where it is linked, else a scratch dir made once
    for this process and removed at its exit."""
    here = tempfile.gettempdir()
    if linked(here):
        return here
    if not _children_tmp or not os.path.isdir(_children_tmp[0]):
        d = tempfile.mkdtemp(prefix="shapefuzz-tmp-")
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        link(d)
        _children_tmp[:] = [d]
    return _children_tmp[0]


def scratch_tmpdir(prefix: str = "shapefuzz-tmp-") -> str | None:
    """For a process that compiles in place (`check`, `shrink`, ...): a TMPDIR of its own with the header
    path linked to the kept dir, set for this process and its children and removed at exit. Call before
    torch._inductor is imported (it fixes the header path then). Nothing is done where this process's
    TMPDIR is linked already (a campaign worker's) or Inductor was imported already (returns None)."""
    import sys

    if linked(tempfile.gettempdir()) or "torch._inductor.codecache" in sys.modules:
        return None
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, ignore_errors=True)  # the link goes, the kept header stays
    link(d)
    os.environ["TMPDIR"] = d
    tempfile.tempdir = None  # read TMPDIR again
    return d
