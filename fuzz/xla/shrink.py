"""Shrink a step-program finding with its signature pinned.

Greedy passes to a fixpoint, each candidate checked by `steps.check` before
it is judged, every judged program cached by its JSON:
  drop a whole block; drop one step (later steps first: observations and
  syncs at the end are the cheapest to lose); cut a block's `repeat` to 1,
  then by one (its size lists cut to match); settings back to defaults;
  the dtype to int64 (the seed's).
A candidate counts only when it is a finding with the original's signature
key, so a shrink never slides to another bug. `evaluate` judges one program
(`run_step_program` with a planted fault, a fresh process, ...).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Callable

from fuzz.ir import ProgramError
from fuzz.signature import signature
from fuzz.verdict import Verdict

from .steps import StepProgram, XlaSettings, check

Evaluate = Callable[[StepProgram], Verdict]


@dataclass
class StepShrinkResult:
    program: StepProgram
    verdict: Verdict
    key: str
    steps_before: int
    steps_after: int
    evaluations: int = 0
    seconds: float = 0.0
    timed_out: bool = False
    accepted: list = field(default_factory=list)  # what each accepted step did


def n_steps(p: StepProgram) -> int:
    return sum(len(b.steps) for b in p.blocks)


def _candidates(p: StepProgram):
    """(what, smaller program) in the order tried."""
    for i in range(len(p.blocks)):
        if len(p.blocks) > 1:
            q = copy.deepcopy(p)
            del q.blocks[i]
            yield f"drop block {i}", q
    for i in reversed(range(len(p.blocks))):
        for j in reversed(range(len(p.blocks[i].steps))):
            if len(p.blocks[i].steps) > 1:
                q = copy.deepcopy(p)
                del q.blocks[i].steps[j]
                yield f"drop step {i}.{j} ({p.blocks[i].steps[j].op})", q
    for i, b in enumerate(p.blocks):
        for r in sorted({1, b.repeat - 1}):
            if 1 <= r < b.repeat:
                q = copy.deepcopy(p)
                q.blocks[i].repeat = r
                q.blocks[i].sizes = {s: v[:r] for s, v in b.sizes.items()}
                yield f"block {i} repeat {b.repeat} -> {r}", q
    if p.settings != XlaSettings():
        q = copy.deepcopy(p)
        q.settings = XlaSettings()
        yield "default settings", q
    if p.dtype != "int64":
        q = copy.deepcopy(p)
        q.dtype = "int64"
        yield f"dtype {p.dtype} -> int64", q


def shrink_steps(p: StepProgram, evaluate: Evaluate, *, time_budget: float = 300.0) -> StepShrinkResult:
    """Shrink finding `p`; raises ValueError when `p` is not a finding."""
    start = time.monotonic()
    v = evaluate(p)
    if not v.is_finding:
        raise ValueError(f"not a finding: {v.summary()}")
    key = signature(v).key
    res = StepShrinkResult(program=p, verdict=v, key=key, steps_before=n_steps(p), steps_after=n_steps(p),
                           evaluations=1)
    tried = {p.to_json(sort_keys=True)}
    progress = True
    while progress:
        progress = False
        for what, q in _candidates(res.program):
            if time.monotonic() - start > time_budget:
                res.timed_out = True
                break
            text = q.to_json(sort_keys=True)
            if text in tried:
                continue
            tried.add(text)
            try:
                check(q)
            except ProgramError:
                continue
            res.evaluations += 1
            w = evaluate(q)
            if w.is_finding and signature(w).key == key:
                res.program, res.verdict = q, w
                res.accepted.append(what)
                progress = True
                break  # restart from the first pass on the smaller program
        if res.timed_out:
            break
    res.steps_after = n_steps(res.program)
    res.seconds = time.monotonic() - start
    return res


def main(argv=None) -> int:
    """python -m fuzz.xla.shrink PROGRAM.json [-o OUT.json] [--fault NAME] [--time-budget S]"""
    import argparse
    import sys
    from pathlib import Path

    from .backend import run_step_program

    ap = argparse.ArgumentParser(prog="python -m fuzz.xla.shrink", description="shrink a step-program finding")
    ap.add_argument("program")
    ap.add_argument("-o", "--output", help="where to write the shrunk program (default: print it)")
    ap.add_argument("--fault", default=None, help="a planted fault (fuzz/xla/backend.py), for testing")
    ap.add_argument("--time-budget", type=float, default=300.0)
    args = ap.parse_args(argv)
    try:
        p = StepProgram.from_json(Path(args.program).read_text())
        res = shrink_steps(p, lambda q: run_step_program(q, fault=args.fault), time_budget=args.time_budget)
    except (OSError, ProgramError, ValueError) as e:
        print(f"shrink: {e}", file=sys.stderr)
        return 2
    print(f"steps {res.steps_before} -> {res.steps_after}, {res.evaluations} evaluations, {res.seconds:.1f} s"
          + (" (time budget reached)" if res.timed_out else ""), file=sys.stderr)
    print(f"verdict: {res.verdict.summary()}", file=sys.stderr)
    text = res.program.to_json(indent=1)
    if args.output:
        Path(args.output).write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
