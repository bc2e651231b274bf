"""Shrinking a torch_xla step-program finding with its signature pinned.

The step-program kind of the shrink engine (fuzz/findings/shrink/engine.py:
cache, fixpoint, budget, flakiness re-checks). A candidate is valid if
`step_ir.check` accepts it; the cost is (steps, tensor args, repeats,
non-default settings, non-int64 dtype, JSON length), which every candidate
below lowers. Passes, in order; after any accepted step the sweep starts
over from the first (unlike compiled programs, whose passes resume): a
smaller program may let a whole block or step go, which is worth more than
anything after it:

  blocks     drop a whole block
  steps      drop one step (later steps first: observations and syncs at the
             end are the cheapest to lose)
  observe    drop one tensor from an observation (its producers can go next)
  repeat     cut a block's `repeat` to 1, then by one (its size lists cut to match)
  settings   settings back to the defaults
  dtype      the dtype to int64 (the seed's)

A candidate counts only when it is a finding in the original's bucket
(in_bucket: a value finding may lose op kinds), so a shrink never slides to
another bug. `evaluate` judges one program (`run_step_program` with a planted
fault, or `fresh_evaluator`: a fresh process, screened in this one).
"""

from __future__ import annotations

import copy
from typing import Callable

from fuzz.findings.shrink.engine import Engine, ShrinkResult
from fuzz.judge.verdict import Verdict

from fuzz.program.step_ir import StepProgram, XlaSettings, check

Evaluate = Callable[[StepProgram], Verdict]
StepShrinkResult = ShrinkResult  # the older name: one result type for every kind


def n_steps(p: StepProgram) -> int:
    return sum(len(b.steps) for b in p.blocks)


# -- passes --------------------------------------------------------------------

def _pass_blocks(p: StepProgram):
    for i in range(len(p.blocks)):
        if len(p.blocks) > 1:
            q = copy.deepcopy(p)
            del q.blocks[i]
            yield f"drop block {i}", q


def _pass_steps(p: StepProgram):
    for i in reversed(range(len(p.blocks))):
        for j in reversed(range(len(p.blocks[i].steps))):
            if len(p.blocks[i].steps) > 1:
                q = copy.deepcopy(p)
                del q.blocks[i].steps[j]
                yield f"drop step {i}.{j} ({p.blocks[i].steps[j].op})", q


def _pass_observe(p: StepProgram):
    """Read fewer tensors at an observation (then their producers can go)."""
    for i, b in enumerate(p.blocks):
        for j, st in enumerate(b.steps):
            if st.op == "observe" and len(st.args) > 1:
                for k in reversed(range(len(st.args))):
                    q = copy.deepcopy(p)
                    del q.blocks[i].steps[j].args[k]
                    yield f"observe {i}.{j} without {st.args[k]}", q


def _pass_repeat(p: StepProgram):
    for i, b in enumerate(p.blocks):
        for r in sorted({1, b.repeat - 1}):
            if 1 <= r < b.repeat:
                q = copy.deepcopy(p)
                q.blocks[i].repeat = r
                q.blocks[i].sizes = {s: v[:r] for s, v in b.sizes.items()}
                yield f"block {i} repeat {b.repeat} -> {r}", q


def _pass_settings(p: StepProgram):
    if p.settings != XlaSettings():
        q = copy.deepcopy(p)
        q.settings = XlaSettings()
        yield "default settings", q


def _pass_dtype(p: StepProgram):
    if p.dtype != "int64":
        q = copy.deepcopy(p)
        q.dtype = "int64"
        yield f"dtype {p.dtype} -> int64", q


PASSES = [("blocks", _pass_blocks), ("steps", _pass_steps), ("observe", _pass_observe),
          ("repeat", _pass_repeat), ("settings", _pass_settings), ("dtype", _pass_dtype)]


# -- the kind ------------------------------------------------------------------

def _settings_off(s: XlaSettings) -> int:
    default = XlaSettings()
    return sum(getattr(s, f) != getattr(default, f) for f in s.__dataclass_fields__)


class StepKind:
    """Step programs for the shrink engine."""

    restart = True

    def passes(self, engine: Engine) -> list:
        return list(PASSES)

    @staticmethod
    def cost(p: StepProgram) -> tuple:
        return (n_steps(p), sum(len(s.args) for _, s in p.steps()), sum(b.repeat for b in p.blocks),
                _settings_off(p.settings), int(p.dtype != "int64"), len(StepKind.canonical(p)))

    @staticmethod
    def canonical(p: StepProgram) -> str:
        return p.to_json(sort_keys=True)

    check = staticmethod(check)

    @staticmethod
    def measures(p: StepProgram) -> dict:
        return {"steps": n_steps(p)}


STEPS = StepKind()


def shrink_steps(p: StepProgram, evaluate: Evaluate, *, time_budget: float = 300.0, target: str | None = None,
                 reruns: int = 0, log: Callable[[str], None] | None = None) -> ShrinkResult:
    """Shrink finding `p`; raises ValueError when `p` is not a finding (or not
    one in bucket `target`, a signature text, when given) and ProgramError
    when it is not a valid step program. A candidate counts when its
    signature falls in the bucket. `reruns`: tries of the original, and
    re-checks of the result (0: one evaluation each, no re-check)."""
    check(p)
    engine = Engine(STEPS, evaluate, target_text=target, time_budget=time_budget, log=log)
    res = engine.run(copy.deepcopy(p), reruns=reruns)
    if not res.reproduced:
        v = res.original_verdict
        if v is None:
            raise ValueError(f"not a finding: evaluate raised {res.error}")
        raise ValueError(f"{'reproduces another bug' if v.is_finding else 'not a finding'}: {v.summary()}")
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
                      evaluate: Evaluate | None = None) -> ShrinkResult:
    """Shrink a torch_xla corpus entry with its signature pinned, every
    candidate in a fresh process (fresh_evaluator). The result is re-checked
    in `reruns` more runs (a flaky one is kept out: the engine falls back to
    an earlier program that reproduces every time); when it is smaller,
    Corpus.update_shrunk replaces the entry's program.json, verdict.json and
    repro.py (original_program.json keeps the first) and records the figures
    under meta.json "shrink". Raises ValueError when the entry does not
    reproduce."""
    from pathlib import Path

    from fuzz.findings.store.corpus import Corpus

    entry_dir = Path(entry_dir)
    corpus = Corpus(entry_dir.parent)
    entry = corpus.load(entry_dir)
    if not isinstance(entry.program, StepProgram):
        raise ValueError(f"{entry_dir} is not a torch_xla entry")
    res = shrink_steps(entry.program, evaluate or fresh_evaluator(), time_budget=time_budget,
                       target=entry.bucket.text, reruns=reruns)
    if write and res.verdict is not None:  # smaller or not: the entry is shrunk now
        corpus.update_shrunk(entry_dir, res.program, res.verdict, res.stats())
    return res
