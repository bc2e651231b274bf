"""A hang in a cold worker pool is judged once more before it counts.

A campaign's first cases also pay for one-time work: each worker's first
compiles and, on Inductor CPU, the precompiled C++ header, made once in the
pool's shared scratch dir. On a loaded machine that alone can run past the
per-case limit: the first two cases of a `--time 3m` quick start on a busy
2-CPU box were filed as NEW hangs. Until some worker has answered a case, a
hung case is queued once more (each case once, at most one per worker) and
the user is told, with the machine's load. The campaign's pool asks for this
(WorkerPool rerun_cold_hangs); the one-case pools of check, shrink and triage
do not, so a real hang costs them one time limit, as before.
"""

from __future__ import annotations

import os


class ColdStart:
    def __init__(self, enabled: bool, note=None):
        self.enabled = enabled
        self.note = note  # str -> None: the user hears of each rerun
        self.answered = 0  # cases a worker answered (no hang, no death): warm from the first
        self.reruns: set = set()  # case ids queued again after a cold hang

    def rerun(self, job, workers: int, pending) -> bool:
        """Queue hung `job` first in `pending` (the pool's queue of (case_id, program, timeout, key)) to be
        judged once more, when the pool is cold; True when queued (the hang does not count yet)."""
        if not self.enabled or self.answered or job.case_id in self.reruns or len(self.reruns) >= workers:
            return False
        self.reruns.add(job.case_id)
        pending.appendleft((job.case_id, job.program, job.timeout, job.key))
        if self.note is not None:
            self.note(f"case {job.case_id} ran past the {job.timeout:g} s limit before any worker had finished a "
                      f"case (its compiles also pay for one-time work, e.g. Inductor's precompiled C++ header; "
                      f"{load_line()}): judging it once more before it counts as a hang")
        return True


def load_line() -> str:
    """'load average 3.1 on 2 CPUs': how busy this machine is (a slow case may be the machine's doing)."""
    try:
        return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    except OSError:
        return "load average unknown"
