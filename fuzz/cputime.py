"""CPU-seconds of follow-up work, by kind, for jobs.jsonl (fuzz/campaign/followups/runner.py).

A job's work is spread over processes: its compute (a shrink's or a triage's
judging) in a process of its own or in the runner, the standalone checks
(a repro in a fresh process, fuzz/judge/isolated.py run_command) started by
the runner's thread that runs the job. Each part adds its CPU-seconds here,
to the calling thread's meter, so that jobs run side by side in threads are
counted apart. Imports nothing of shapefuzz.
"""

from __future__ import annotations

import resource
import threading
import time
from contextlib import contextmanager

_local = threading.local()


def process_tree() -> float:
    """User + system CPU-seconds of this process and of its children it has waited for."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def add(kind: str, seconds: float) -> None:
    """Count `seconds` of `kind` ("compute", "checks") on this thread's meter, when one runs."""
    acc = getattr(_local, "acc", None)
    if acc is not None and seconds > 0:
        acc[kind] = acc.get(kind, 0.0) + seconds


@contextmanager
def metered(in_process: bool):
    """Yields a dict that holds, once the block ends, the CPU-seconds its work
    added by kind, plus "runner" (this thread's own time). in_process: the
    job computes in this process, one at a time: its whole process tree's
    time, less what was counted as checks, is its compute."""
    acc: dict = {}
    before, _local.acc = getattr(_local, "acc", None), acc
    t0, p0 = time.thread_time(), process_tree() if in_process else 0.0
    try:
        yield acc
    finally:
        _local.acc = before
        if in_process:
            acc["compute"] = max(0.0, process_tree() - p0 - acc.get("checks", 0.0))
        else:
            acc["runner"] = time.thread_time() - t0
        for k in acc:
            acc[k] = round(acc[k], 2)
