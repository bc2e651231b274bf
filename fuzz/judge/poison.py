"""Errors that leave a process untrustworthy, and the rerun policy built on
them. Stdlib only: the worker pool's parent uses it without importing torch.

A CUDA error poisons the context for the rest of the process; after a
MemoryError the heap may be fragmented or half-freed. Such a process runs
nothing more: a worker is replaced, a finding is not rerun there.
"""

from __future__ import annotations

from typing import Callable

from fuzz.judge.verdict import Outcome, Verdict

# Matched as substrings of "exc_type: message" of the verdict, by restart cause.
CUDA_ERROR_PATTERNS = (
    "CUDA error", "illegal memory access", "device-side assert", "misaligned address",
    "unspecified launch failure", "CUBLAS_STATUS", "CUDNN_STATUS", "CUDA out of memory",
    "cudaError", "CUDA driver error", "Triton Error [CUDA]", "an illegal instruction was encountered",
    "HIP error", "hipError",
)
REPLACE_AFTER = {"cuda": CUDA_ERROR_PATTERNS, "memory": ("MemoryError",)}


def replace_cause(verdict) -> str | None:
    """The restart cause a verdict (or its dict) calls for ("cuda", "memory"), or None."""
    d = verdict if isinstance(verdict, dict) else verdict.to_dict()
    text = f"{d.get('exc_type', '')}: {d.get('message', '')}"
    for cause, patterns in REPLACE_AFTER.items():
        if any(p in text for p in patterns):
            return cause
    return None


def needs_isolation(verdict) -> bool:
    """Whether re-running a finding must happen in a sandboxed worker: it
    crashed or hung (it would take the caller down), or it left the process
    untrustworthy (a CUDA error poisons the context for every later run)."""
    d = verdict if isinstance(verdict, dict) else verdict.to_dict()
    return d.get("outcome") in ("crash", "hang") or replace_cause(d) is not None


def judge_twice(judge_once: Callable[[], Verdict], rerun: bool | Callable[[Verdict], bool] = True) -> Verdict:
    """judge_once(), and for a finding a second time: FLAKY when the rerun
    passes (failed once, passed once), so that it is not reported as a bug; a
    rerun that fails another way (outcome, call or exception type) keeps the
    first verdict, marked nondeterministic (`nondeterministic`): garbage read
    out of bounds changes from run to run, and that is a bug. No rerun after a
    poisoning error: it would fail on the poison alone and turn a real finding
    into FLAKY. rerun may be a predicate on the first verdict (a campaign
    reruns only findings it has not confirmed)."""
    v = judge_once()
    if not (v.is_finding and (rerun(v) if callable(rerun) else rerun)) or replace_cause(v) is not None:
        return v
    again = judge_once()
    if (again.outcome, again.call, again.exc_type) == (v.outcome, v.call, v.exc_type):
        return v
    if again.is_finding:
        return nondeterministic(v, again)
    return Verdict(outcome=Outcome.FLAKY, stage=v.stage, call=v.call, sizes=v.sizes,
                   message=f"first: {v.summary()} | rerun: {again.summary()}",
                   recompiles=v.recompiles, seconds=v.seconds + again.seconds)


NONDETERMINISTIC = "nondeterministic"  # numbers key, and the word `where` carries, of a finding that fails two ways


def nondeterministic(v: Verdict, again: Verdict) -> Verdict:
    """v, the first of two failing runs with different symptoms, noting the second in `where` (after the
    value it names, in brackets: the signature reads `where` up to its first space) and numbers: one bug that shows as
    it pleases, not a flaky pass."""
    note = f"{NONDETERMINISTIC}: {again.summary()[:300]} on rerun"
    v.where = f"{v.where} ({note})" if v.where else note
    v.numbers = {**v.numbers, NONDETERMINISTIC: 1}
    v.seconds += again.seconds
    return v
