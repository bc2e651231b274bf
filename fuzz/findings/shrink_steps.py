"""Shrink a step-program finding with its signature pinned.

Greedy passes to a fixpoint, each candidate checked by `steps.check` before
it is judged, every judged program cached by its JSON:
  drop a whole block; drop one step (later steps first: observations and
  syncs at the end are the cheapest to lose); drop one tensor from an
  observation (its producers can go next); cut a block's `repeat` to 1,
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

from fuzz.program.ir import ProgramError
from fuzz.findings.signature import in_bucket, signature
from fuzz.judge.verdict import Verdict

from fuzz.program.step_ir import StepProgram, XlaSettings, check

Evaluate = Callable[[StepProgram], Verdict]


@dataclass
class StepShrinkResult:
    program: StepProgram
    verdict: Verdict
    key: str  # the signature key pinned (of the original program)
    steps_before: int
    steps_after: int
    evaluations: int = 0
    seconds: float = 0.0
    timed_out: bool = False
    accepted: list = field(default_factory=list)  # what each accepted step did
    target: str = ""  # the signature text pinned: every accepted program's falls in its bucket (in_bucket)


    def stats(self) -> dict:
        return {"steps_before": self.steps_before, "steps_after": self.steps_after,
                "evaluations": self.evaluations, "seconds": round(self.seconds, 1), "timed_out": self.timed_out,
                "accepted": self.accepted}

    def summary(self) -> str:
        return (f"steps {self.steps_before} -> {self.steps_after}, {self.evaluations} evaluations, "
                f"{self.seconds:.1f} s" + (" (time budget reached)" if self.timed_out else ""))


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
    for i, b in enumerate(p.blocks):  # read fewer tensors at an observation (then their producers can go)
        for j, st in enumerate(b.steps):
            if st.op == "observe" and len(st.args) > 1:
                for k in reversed(range(len(st.args))):
                    q = copy.deepcopy(p)
                    del q.blocks[i].steps[j].args[k]
                    yield f"observe {i}.{j} without {st.args[k]}", q
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


def shrink_steps(p: StepProgram, evaluate: Evaluate, *, time_budget: float = 300.0,
                 target: str | None = None) -> StepShrinkResult:
    """Shrink finding `p`; raises ValueError when `p` is not a finding (or not
    one in bucket `target`, a signature text, when given). A candidate counts
    when its signature falls in the bucket (in_bucket: a value finding may
    lose op kinds)."""
    start = time.monotonic()
    v = evaluate(p)
    if not v.is_finding:
        raise ValueError(f"not a finding: {v.summary()}")
    if target is not None and not in_bucket(signature(v, p).text, target):
        raise ValueError(f"reproduces another bug: {v.summary()}")
    target = target or signature(v, p).text
    key = signature(v, p).key
    res = StepShrinkResult(program=p, verdict=v, key=key, steps_before=n_steps(p), steps_after=n_steps(p),
                           evaluations=1, target=target)
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
            if w.is_finding and in_bucket(signature(w, q).text, target):
                res.program, res.verdict = q, w
                res.accepted.append(what)
                progress = True
                break  # restart from the first pass on the smaller program
        if res.timed_out:
            break
    res.steps_after = n_steps(res.program)
    res.seconds = time.monotonic() - start
    return res


def fresh_evaluator(timeout: float = 300.0, screen: bool = True) -> Evaluate:
    """Judge each candidate in a new process, so no cache left by another
    candidate can make its verdict. A new process costs seconds (importing
    torch_xla), so with `screen` a candidate is first run in this process and
    only one that fails here is re-judged fresh (that verdict counts); one
    that passes here is rejected at once. Earlier candidates' cached graphs
    can only add failures (a stale executable), which the fresh run filters
    out. SHAPEFUZZ_XLA_FAULT plants a fault (tests)."""
    import os

    from fuzz.judge.steps import PoisonedProcess, run_step_program

    fault = os.environ.get("SHAPEFUZZ_XLA_FAULT") or None
    def evaluate(q: StepProgram) -> Verdict:
        nonlocal screen
        if screen:
            try:
                here = run_step_program(q, fault=fault)
                if not here.is_finding:
                    return here
            except PoisonedProcess:  # this process is broken: fresh processes only from here on
                screen = False
        return run_step_program(q, fault=fault, fresh=True, timeout=timeout)

    return evaluate


def shrink_step_entry(entry_dir, *, time_budget: float = 300.0, reruns: int = 2, write: bool = True,
                      evaluate: Evaluate | None = None) -> StepShrinkResult:
    """Shrink a torch_xla corpus entry with its signature pinned, every
    candidate in a fresh process; when the result reproduces in `reruns`
    more fresh runs, replace the entry's program.json, verdict.json and
    repro.py (original_program.json keeps the first) and record the figures
    under meta.json "shrink". Raises ValueError when the entry does not
    reproduce, or its shrunk form is flaky."""
    from pathlib import Path

    from fuzz.findings.corpus import Corpus
    from fuzz.kinds import is_step_program

    entry_dir = Path(entry_dir)
    corpus = Corpus(entry_dir.parent)
    entry = corpus.load(entry_dir)
    if not is_step_program(entry.program):
        raise ValueError(f"{entry_dir} is not a torch_xla entry")
    evaluate = evaluate or fresh_evaluator()
    res = shrink_steps(entry.program, evaluate, time_budget=time_budget, target=entry.signature.text)
    for i in range(reruns if res.program is not entry.program else 0):
        w = evaluate(res.program)
        if not (w.is_finding and in_bucket(signature(w, res.program).text, entry.signature.text)):
            raise ValueError(f"flaky: the shrunk program did not reproduce on rerun {i + 1}: {w.summary()}")
    if write and res.program.to_json(sort_keys=True) != entry.program.to_json(sort_keys=True):
        corpus.update_shrunk(entry_dir, res.program, res.verdict, res.stats())
    return res


def main(argv=None) -> int:
    """python -m fuzz.findings.shrink_steps PROGRAM.json [-o OUT.json] [--fault NAME] [--time-budget S]"""
    import argparse
    import sys
    from pathlib import Path

    from fuzz.judge.steps import run_step_program

    ap = argparse.ArgumentParser(prog="python -m fuzz.findings.shrink_steps", description="shrink a step-program finding")
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
