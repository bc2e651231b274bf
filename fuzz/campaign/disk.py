"""A campaign's disk: the compile-cache limit, its default, where the
follow-ups' caches and scratch files live, and a full disk.

Workers keep their Inductor and Triton caches and their scratch files
(TMPDIR) under STATE/workers/w<slot>/ (fuzz/campaign/workers.py), and the
follow-up runner under STATE/followup-cache/; nothing goes to the shared
/tmp/torchinductor_<user>, ~/.triton or /tmp. Together they stay under the
limit: each worker has its share and is replaced, its caches emptied, once
over it; the follow-up runner ends after a job that leaves it over its
share, and the next one starts with empty caches.

A full disk (ENOSPC, or a quota) anywhere stops the campaign with DiskFull:
one line, exit 2. A case whose verdict says the disk is full is not
recorded, so rerunning the same command judges it again: nothing is lost.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil

from fuzz.campaign.errors import StateError
from fuzz.files import free_bytes

DEFAULT_FRACTION = 0.4  # of the free space of the state dir's disk at start
FOLLOWUP_CACHE = "followup-cache"
_FULL = re.compile(r"No space left on device|Disk quota exceeded|\[Errno (?:28|122)\]")


# Inductor's precompiled C++ headers (CPU kernels): ~150 MB each, kept once per machine outside the state
# dir and linked into every compiling process's scratch dir (fuzz/pch.py), up to its cap. The limit reserves
# that cap; under a limit too small to hold it beside the caches none is made (slower C++ compiles).
PCH_RESERVE = 200 * 10**6
PCH_COPIES = 2  # the kept dir's cap, in reserves (pch.CAP)
PCH_FROM = 4 * PCH_RESERVE


def compile_env(limit: int) -> dict:
    """Variables for every compiling process of a campaign under cache limit `limit`."""
    return {} if limit >= PCH_FROM else {"TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0"}


def cache_shares(limit: int, workers: int) -> tuple[int, int]:
    """(the workers' caches together, the follow-up runner's): the limit less the precompiled headers'
    reserve, shared out evenly over the workers and the follow-up runner."""
    room = limit - (PCH_COPIES * PCH_RESERVE if limit >= PCH_FROM else 0)
    each = max(1, room // (max(1, workers) + 1))
    return each * max(1, workers), each


class DiskFull(StateError):
    """The disk (of the state dir, the corpus, or a cache) is full."""


def default_cache_limit(state_dir) -> int:
    return max(1, int(free_bytes(state_dir) * DEFAULT_FRACTION))


class DiskGovernor:
    """A campaign's part that keeps its disk: the cache limit (given, or DEFAULT_FRACTION of the free
    space), its shares for the workers and the follow-up runner, the variables every compiling process
    gets, and the stop on a full disk."""

    def __init__(self, cfg):
        self.limit = cfg.cache_limit or default_cache_limit(cfg.state_dir)
        self.workers_share, self.followup_share = cache_shares(self.limit, cfg.workers or 1)
        self.compiling = compile_env(self.limit)

    def followup_env(self, state_dir: str) -> dict:
        """The follow-up runner's: caches and scratch under the state dir, its share of the limit."""
        return {**followup_env(state_dir, self.followup_share), **self.compiling}

    @contextlib.contextmanager
    def stops_when_full(self, stop):
        """A full disk met inside (a write of the state dir or the corpus, or a verdict that says so)
        calls `stop` and raises DiskFull (one line); any other error passes as it is."""
        try:
            yield
        except OSError as e:
            if not is_disk_full(e):
                raise
            stop()
            raise disk_full(f"{e.filename or 'a write'}: {e.strerror}") from None
        except DiskFull:
            stop()
            raise


def limit_line(limit: int, given: bool, state_dir) -> str:
    """How the start line names the limit."""
    from fuzz.files import human_bytes

    if given:
        return f"cache limit {human_bytes(limit)}"
    return (f"cache limit {human_bytes(limit)} ({DEFAULT_FRACTION:.0%} of the {human_bytes(free_bytes(state_dir))} "
            f"free there; --cache-limit to set it)")


def is_disk_full(e: BaseException) -> bool:
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)


def says_disk_full(message: str | None) -> bool:
    """Whether a verdict's message is a full disk (a compiler that could not write), not a bug."""
    return bool(message) and bool(_FULL.search(message))


def disk_full(where: str) -> DiskFull:
    return DiskFull(f"the disk is full ({where}): free some space, or lower --cache-limit, then run the same "
                    "command again to resume; nothing is lost")


def followup_env(state_dir: str, share: int | None) -> dict:
    """The follow-up runner's caches and scratch dir, under the state dir."""
    home = os.path.join(os.path.abspath(state_dir), FOLLOWUP_CACHE)
    env = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(home, "inductor"), "TRITON_CACHE_DIR": os.path.join(home, "triton"),
           "TMPDIR": os.path.join(home, "tmp")}
    if share is not None:
        env["SHAPEFUZZ_CACHE_SHARE"] = str(share)
    return env


def reset_followup_cache(state_dir: str) -> None:
    """Empty the follow-up runner's caches and scratch dir (one runner at a time holds the state dir); its
    precompiled header path is linked to the machine's kept one (fuzz/pch.py)."""
    from fuzz import pch

    home = os.path.join(state_dir, FOLLOWUP_CACHE)
    shutil.rmtree(home, ignore_errors=True)
    for sub in ("inductor", "triton", "tmp"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    pch.link(os.path.join(home, "tmp"))


def over_share(state_dir: str) -> bool:
    """Whether the follow-up runner's caches are over the share it was given."""
    from fuzz.files import tree_bytes

    share = os.environ.get("SHAPEFUZZ_CACHE_SHARE")
    return bool(share) and tree_bytes(os.path.join(state_dir, FOLLOWUP_CACHE)) > int(share)


def cache_bytes(env: dict) -> int:
    """A worker's compile caches, in bytes (its TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR)."""
    from fuzz.files import tree_bytes

    return sum(tree_bytes(env[k]) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR") if env.get(k))
