"""Standalone checks that reuse the kernels their shrink has just compiled.

A shrink ends by running the entry's short repro (and, where needed, its harness) in a fresh Python
process with compile caches of its own, to show that the finding needs no history
(fuzz/findings/standalone.py). That process compiled again, from nothing, the kernels the shrink's
last judge had compiled a moment before: about 28 CPU-s of checks per entry on a GPU box.

So the check's empty caches are seeded with the shrink's compiled kernels, as links, and with nothing
else. What is shared is content-addressed only: a file named by the hash of what it holds (Inductor's
generated modules, C++ sources and the libraries built from them, keyed by source and compile command;
Triton's cache, keyed by kernel source, options and target). A fresh process that generates a kernel of
that very source finds the file its compiler would have written; one that generates another source
compiles it. What holds a decision, or would skip a step that could go otherwise, is not shared: the FX
graph and AOTAutograd caches (a graph they serve is not lowered again), autotuning results
(.best_config), Inductor's local caches (pad_mm, autotuning). The check still traces, lowers and
generates code from cold as a user's first run does; it only skips compiler runs whose output is
already fixed by their input.

The follow-up runner names the shrink's cache dirs for the thread that runs the job (`reusing`, `add`);
fuzz/judge/isolated.py run_script seeds each fresh process's caches from them (`seed`).
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager

_local = threading.local()
# the files of Inductor's two-character dirs that are named by their content's hash (and compile command)
INDUCTOR_KERNELS = (".py", ".cpp", ".h", ".so", ".o")
SKIPPED = (".best_config", ".lock")  # an autotuning decision; a lock file


@contextmanager
def reusing(*dirs):
    """While the block runs, this thread's standalone checks start from the kernels in `dirs` (pairs of an
    Inductor and a Triton cache dir; None where there is none)."""
    before = getattr(_local, "sources", None)
    _local.sources = [tuple(d) for d in dirs if d]
    try:
        yield _local.sources
    finally:
        _local.sources = before


def add(inductor_dir: str | None, triton_dir: str | None) -> bool:
    """Name one more pair of cache dirs for this thread's checks (a shrink computed in a process of its
    own, whose caches stay until the checks are done); False when no `reusing` block runs."""
    sources = getattr(_local, "sources", None)
    if sources is None:
        return False
    sources.append((inductor_dir, triton_dir))
    return True


def seed(env: dict, python: str | None = None) -> int:
    """Link the kernels of this thread's sources into the empty caches `env` names (TORCHINDUCTOR_CACHE_DIR,
    TRITON_CACHE_DIR); returns how many files. None for another interpreter (another torch compiles
    other kernels from the same source)."""
    sources = getattr(_local, "sources", None)
    if not sources or (python is not None and os.path.realpath(python) != os.path.realpath(sys.executable)):
        return 0
    linked = 0
    for inductor_dir, triton_dir in sources:
        if inductor_dir and env.get("TORCHINDUCTOR_CACHE_DIR"):
            linked += _link_tree(inductor_dir, env["TORCHINDUCTOR_CACHE_DIR"], _inductor_kernel)
        if triton_dir and env.get("TRITON_CACHE_DIR"):
            linked += _link_tree(triton_dir, env["TRITON_CACHE_DIR"], _triton_file)
    return linked


def _inductor_kernel(sub: str, name: str) -> bool:
    # the hash-named dirs only: fxgraph/, aotautograd/, cache/ ... hold decisions and cached graphs
    return len(sub) == 2 and sub.isalnum() and name.endswith(INDUCTOR_KERNELS) and not name.endswith(SKIPPED)


def _triton_file(sub: str, name: str) -> bool:
    return not name.endswith(SKIPPED)


def _link_tree(src: str, dst: str, keep) -> int:
    """Link src/SUB/NAME to dst/SUB/NAME for each file `keep(SUB, NAME)` accepts, where dst has none."""
    n = 0
    try:
        subs = os.listdir(src)
    except OSError:
        return 0
    for sub in subs:
        d = os.path.join(src, sub)
        if not os.path.isdir(d) or os.path.islink(d):
            continue
        try:
            names = [f for f in os.listdir(d) if keep(sub, f)]
        except OSError:
            continue
        if not names:
            continue
        os.makedirs(os.path.join(dst, sub), exist_ok=True)
        for f in names:
            a, b = os.path.join(d, f), os.path.join(dst, sub, f)
            if not os.path.isfile(a) or os.path.islink(a) or os.path.lexists(b):
                continue
            try:
                os.link(a, b)  # a writer replaces files by rename: the shrink's copy is never written through
            except OSError:
                try:
                    os.symlink(a, b)  # another file system: the source outlives the check
                except OSError:
                    continue
            n += 1
    return n
