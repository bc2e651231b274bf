"""When a timed campaign stops drawing cases, so that its findings are shrunk
by its end (the bar: at most 10% unshrunk when a 30-minute GPU campaign ends).

A finding made in the last minutes cannot be shrunk before the time limit:
its shrink takes minutes on CUDA (the search, then the standalone checks),
and the CPUs are the cases'. So a campaign with --time stops its cases once
the shrinks pending (and one more, for a finding made now) need the rest of
the time with every CPU, estimated from the shrinks this state dir has done;
then the follow-ups get the machine until the limit. Never before the last
LATEST_SHARE of the time limit: a campaign with a long backlog still spends
most of its time on cases. Triages are not waited for: they come after the
shrinks and run on (or are left pending, with --no-wait) past the limit.

Imports no torch.
"""

from __future__ import annotations

import math
import statistics

LATEST_SHARE = 0.2  # the wind-down takes at most this share of the time limit
URGENT = ("sanitize", "shrink")  # the jobs wound down for (the rest run after them)


def slow_seconds(jobs, types=URGENT, default: float = 300.0) -> float:
    """The wall time of a slow done job of `types` in a JobLog, the 90th percentile
    (`default` before any). Not the median: in a 30-minute H200 soak the median
    shrink took 55 s, and a wind-down sized by it left 4 shrinks of the last
    minute unfinished at the limit (the slowest took 165 s)."""
    took = [j.finished_at - j.started_at for j in jobs.jobs.values()
            if j.type in types and j.state == "done" and j.started_at is not None and j.finished_at is not None]
    if len(took) < 2:
        return took[0] if took else default
    return statistics.quantiles(took, n=10, method="inclusive")[-1]


def drain_seconds(jobs, slots: int, default: float = 300.0) -> float:
    """Seconds to finish the urgent jobs pending, and one more, on `slots` CPUs at once."""
    waiting = sum(j.type in URGENT for j in jobs.pending())
    return math.ceil((waiting + 1) / max(1, slots)) * slow_seconds(jobs, default=default)


def wind_down_due(remaining: float, time_limit: float, drain: float) -> bool:
    """Whether a campaign with `remaining` of its `time_limit` seconds left stops its cases now."""
    return remaining <= min(drain, LATEST_SHARE * time_limit)


class WindDown:
    """The check of a timed campaign's case stream: wind_down_due, looked at
    most once a second; `note` is told once, when it is."""

    def __init__(self, time_limit: float, elapsed, jobs, slots: int, default: float, note=None, begin=None):
        self.time_limit, self.elapsed, self.jobs, self.slots = time_limit, elapsed, jobs, slots
        self.default, self.note = default, note
        self.begin = begin  # called once, when due: the follow-ups take every CPU now, not when the last case ends
        self.began = False
        self._next = 0.0

    def remaining(self) -> float:
        return max(0.0, self.time_limit - self.elapsed())

    def due(self, now: float) -> bool:
        if self.began:
            return True
        if now < self._next:
            return False
        self._next = now + 1.0
        jobs = self.jobs()
        drain = drain_seconds(jobs, self.slots, self.default)
        if wind_down_due(self.remaining(), self.time_limit, drain):
            self.began = True
            if self.begin is not None:
                self.begin()
            if self.note is not None:
                waiting = sum(j.type in URGENT for j in jobs.pending())
                self.note(f"winding down: no new cases in the last {self.remaining():.0f} s, so that the "
                          f"{waiting} shrinks pending (and those of the last cases) finish in time "
                          f"(about {drain:.0f} s of work on {self.slots} CPUs)")
        return self.began
