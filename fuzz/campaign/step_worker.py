"""Judging step programs inside a campaign worker (fuzz/campaign/workers.py).

Cases run one after another in the worker's process, so graphs compiled by
earlier cases stay cached: that is how cross-case cache bugs show up, and it
also makes a verdict depend on what ran before. A corpus entry must stand
alone, so a finding (but a graph-hash collision, a known issue the campaign
does not record) is confirmed in a fresh process: alone, else after the last case, else after the last few (their
steps concatenated into one program, `steps.concat`). The program that
reproduced replaces the case's program; one that never fails again becomes a
FLAKY verdict (not a finding), its first summary kept in the message; one that
fails again only another way is a nondeterministic finding (poison.nondeterministic).

SHAPEFUZZ_XLA_FAULT plants a fault (fuzz/judge/steps.py FAULTS) in every run,
fresh ones included: for testing the campaign, never for real runs.
"""

from __future__ import annotations

import os
from collections import deque

from fuzz.program.ir import ProgramError
from fuzz.findings.signature import in_bucket, signature
from fuzz.judge.poison import nondeterministic
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.program.step_ir import StepProgram, concat

HISTORY = 3  # earlier cases kept for making a history-dependent finding standalone
FRESH_TIMEOUT = 300.0  # seconds for one fresh-process confirmation

_history: deque = deque(maxlen=HISTORY)
_confirmed: set = set()  # buckets (signature texts) this worker has already confirmed standalone


def prepare() -> None:
    """Import torch_xla once per worker: start-up is not a case's time."""
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    import torch_xla  # noqa: F401


def _fault() -> str | None:
    return os.environ.get("SHAPEFUZZ_XLA_FAULT") or None


def evaluate(d: dict) -> tuple[dict, str | None, dict]:
    """(verdict dict, error, extra) for one step program dict. error is
    "program" (bad program), "harness" (anything else) or None; extra may
    hold "program" (the standalone program that reproduced, when it is not
    the case's own) and "restart" (the worker must be replaced)."""
    from fuzz.judge.steps import KNOWN_COLLISION, PoisonedProcess, known_issue, run_step_program

    try:
        p = StepProgram.from_dict(d)
    except ProgramError as e:
        return Verdict(outcome=Outcome.INVALID, exc_type="ProgramError", message=str(e)).to_dict(), "program", {}
    extra: dict = {}
    try:
        try:
            v = run_step_program(p, fault=_fault())
        except PoisonedProcess:  # an earlier case broke this process: judge in a fresh one, then replace it
            extra["restart"] = "poisoned"
            _history.clear()
            v = run_step_program(p, fault=_fault(), fresh=True, timeout=FRESH_TIMEOUT)
        # A hash collision is matched as known by the campaign and not recorded: no need to confirm it.
        # Only a bucket's first finding in this worker is confirmed: the corpus keeps the first program
        # of a signature, later ones only count hits.
        bucket = signature(v, p).text if v.is_finding else None
        if bucket and bucket not in _confirmed and known_issue(v) != KNOWN_COLLISION and "restart" not in extra:
            v, q = standalone(p, v, list(_history))
            if q is not p:
                extra["program"] = q.to_dict()
            if v.is_finding:
                _confirmed.add(bucket)
    except Exception as e:  # noqa: BLE001 - a harness failure: report it, keep the worker
        from fuzz.judge.verdict import error_verdict

        return error_verdict(Outcome.INVALID, e).to_dict(), "harness", extra
    _history.append(p)
    return v.to_dict(), None, extra


def standalone(p: StepProgram, v: Verdict, history: list) -> tuple[Verdict, StepProgram]:
    """(verdict, program) of finding `v` of `p` re-judged in a fresh process:
    p alone, else the last case then p, else all of `history` then p; the
    first whose verdict falls in v's bucket wins. None does: v marked nondeterministic where one of them
    failed another way, else FLAKY."""
    from fuzz.judge.steps import run_step_program

    tries = [[p]] + ([history[-1:] + [p]] if history else []) + \
        ([history + [p]] if len(history) > 1 else [])
    other = None  # the first fresh run that failed another way
    for programs in tries:
        q = programs[0] if len(programs) == 1 else concat(*programs)
        target = signature(v, q).text
        w = run_step_program(q, fault=_fault(), fresh=True, timeout=FRESH_TIMEOUT)
        if w.is_finding and other is None and not in_bucket(signature(w, q).text, target):
            other = (w, q)
        if w.is_finding and in_bucket(signature(w, q).text, target):
            if len(programs) > 1:
                w.message = (w.message + "\n" if w.message else "") + (
                    f"(history-dependent: reproduces after the {len(programs) - 1} case(s) run before it in the "
                    "same process, concatenated into this program)")
            return w, q
    if other is not None:  # failed twice, two ways: a nondeterministic bug, not a flaky pass
        return nondeterministic(v, other[0]), p
    return Verdict(outcome=Outcome.FLAKY, stage=v.stage, where=v.where, numbers=v.numbers, seconds=v.seconds,
                   message=f"does not reproduce in a fresh process, alone or after the cases before it; "
                           f"in the campaign's process: {v.summary()}"), p
