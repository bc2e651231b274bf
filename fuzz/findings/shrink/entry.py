"""Shrinking a finding to a minimal program with the same signature.

`shrink(program, key)` shrinks a compiled Program with its signature key
pinned; `shrink_entry(dir)` shrinks a corpus entry and rewrites it through
Corpus.update_shrunk. The loop (cache, cost-ordered fixpoint, time budget,
flakiness re-checks) is fuzz/findings/shrink/engine.py; the passes, cost and
canonical form of compiled programs are fuzz/findings/shrink/compiled.py;
torch_xla step programs have their own passes and evaluator in
fuzz/findings/shrink/steps.py.

Crashes and hangs can only be shrunk in a sandbox: pass
`evaluate=pool_evaluator(WorkerPool(workers=1, rerun=False))`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Callable

from fuzz.program.ir import Program
from fuzz.findings.shrink.compiled import COMPILED, canonical, cost, hypothesis_stage, max_rank, remove_ops
from fuzz.findings.shrink.engine import DEFAULT_RERUNS, Engine, ShrinkResult
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Verdict
from fuzz.judge.poison import needs_isolation

__all__ = ["DEFAULT_RERUNS", "ShrinkResult", "canonical", "cost", "evaluate_in_process", "max_rank",
           "pool_evaluator", "remove_ops", "shrink", "shrink_entry"]

Evaluate = Callable[[Program], Verdict]



# -- evaluation ----------------------------------------------------------------

def evaluate_in_process(p: Program) -> Verdict:
    """The default evaluate: run_case in this process, without its rerun (the
    shrinker re-checks the final result itself)."""
    from fuzz.judge.runner import run_case

    return run_case(p, rerun=False)


def pool_evaluator(pool, timeout: float | None = None) -> Evaluate:
    """An evaluate function that judges each program in a WorkerPool (crashes
    and hangs become verdicts). Create the pool with rerun=False."""
    counter = iter(range(1 << 62))

    def evaluate(p: Program) -> Verdict:
        cid = ("shrink", next(counter))
        pool.submit(cid, p.to_dict(), timeout=timeout)
        for got, vd, _info in pool.results():
            if got == cid:
                return Verdict.from_dict(vd)
        raise RuntimeError("the worker pool returned no verdict")

    return evaluate



# -- entry points ----------------------------------------------------------------

def shrink(program: Program, target_signature_key: str, *, evaluate: Evaluate | None = None,
           time_budget: float = 300.0, reruns: int = DEFAULT_RERUNS, relax_families: bool = True,
           hypothesis_examples: int = 0, hypothesis_seed: int = 0, onto: list | None = None,
           log: Callable[[str], None] | None = None) -> ShrinkResult:
    """Shrink `program` while its verdict keeps signature `target_signature_key`.

    evaluate(program) -> Verdict defaults to run_case in this process (without
    its rerun); pass pool_evaluator(pool) for crashes and hangs. The budget
    bounds the shrinking; the final re-checks (`reruns` evaluations of the
    result) run after it. The original is evaluated first: if it does not
    reproduce (after up to `reruns` retries) the result has reproduced=False.
    `onto`: (minimal key, minimal program) pairs of known bugs to try first
    (fuzz/findings/shrink/onto.py); the result's `onto` names the one it
    settled on."""
    engine = Engine(COMPILED, evaluate or evaluate_in_process, key=target_signature_key,
                    relax_families=relax_families, time_budget=time_budget, log=log)
    figures: dict = {}

    def prelude(e: Engine) -> None:
        if onto:
            from fuzz.findings.shrink.onto import onto_stage

            onto_stage(e, onto)
        if hypothesis_examples > 0:
            figures.update(hypothesis_stage(e, hypothesis_examples, hypothesis_seed))

    res = engine.run(copy.deepcopy(program), reruns=reruns, prelude=prelude if hypothesis_examples > 0 or onto else None)
    res.hypothesis = figures
    return res


def _shrink_steadied(p, verdict, key, judge, attempt, log, reruns: int = DEFAULT_RERUNS) -> ShrinkResult | None:
    """Shrink a finding a timed decision may cause (fuzz/findings/steadying.py) with
    that decision forced and pinned, when the decision is the cause: the finding goes
    with it off (a clean pass, 1 + `reruns` times: these findings come and go) and
    shows with it forced, every time. None when no steadier applies, or none did."""
    from fuzz.findings.steadying import pinned, steadied
    from fuzz.judge.verdict import Outcome

    def passes(q) -> bool:
        try:
            return judge(q).outcome is Outcome.OK
        except Exception:  # noqa: BLE001 - a judge that fails says nothing of the cause
            return False

    for steadier, forced, off in steadied(p, verdict):
        if not all(passes(off) for _ in range(1 + max(0, reruns))):
            if log:
                log(f"{steadier.name}: it does not pass cleanly with {steadier.off}, so not by that decision")
            continue
        if log:
            log(f"{steadier.name}: shrinking with {steadier.options} pinned ({steadier.why})")
        res = attempt(forced, pinned(judge, steadier.options))
        if res.reproduced and not res.flaky:
            res.steadied = steadier.name
            return res
    return None


def _shrink_cheaper(p, verdict, key, judge, attempt, log) -> ShrinkResult | None:
    """Shrink under the cheapest backend that shows the finding as found (the
    same signature; fuzz/judge/backends.py cheaper()), then judge the result
    once under `p`'s own backend: when it reproduces there, that is the
    result. None when no cheaper backend shows it, or the confirmation fails
    (the caller shrinks under the own backend). Crashes and hangs are left
    to their own backend: a probe of a hang costs its whole timeout."""
    from fuzz.judge.backends import cheaper

    own = p.settings.backend
    if needs_isolation(verdict):
        return None
    for name in cheaper(own):
        q = copy.deepcopy(p)
        q.settings.backend = name
        try:
            v = judge(q)
        except Exception:  # noqa: BLE001 - a backend that cannot run it shows nothing
            continue
        if not v.is_finding or signature(v, q).key != key:
            continue
        if log:
            log(f"{name} shows it too: shrinking under {name}, confirming under {own}")
        res = attempt(q, judge)
        if not res.reproduced or res.verdict is None or res.flaky:
            return None
        mine = copy.deepcopy(res.program)
        mine.settings.backend = own
        try:
            v = judge(mine)
        except Exception:  # noqa: BLE001 - not confirmed
            v = None
        engine = Engine(COMPILED, judge, key=key, target_text=signature(verdict, p).text,
                        relax_families=res.relax_families)
        if not engine.matches(v, mine):
            if log:
                log(f"the program shrunk under {name} does not reproduce under {own}: shrinking under {own}")
            return None
        res.original, res.program, res.verdict, res.signature = p, mine, v, signature(v, mine)
        res.evaluations += 1
        res.shrunk_with = name
        return res
    return None


def shrink_entry(entry_dir, *, evaluate: Evaluate | None = None, time_budget: float = 300.0,
                 reruns: int = DEFAULT_RERUNS, backend: str | None = None, device: str | None = None,
                 sandbox: bool | None = None, timeout: float = 300.0, relax_families: bool = True,
                 hypothesis_examples: int = 0, write: bool = True, onto: list | None = None,
                 log: Callable[[str], None] | None = None, cheap: bool = True) -> ShrinkResult:
    """Shrink a corpus entry with its signature pinned and, when the program
    reproduces reliably, replace its program.json, verdict.json and
    repro.py by the smallest that does (Corpus.update_shrunk: the first original is kept as
    original_program.json, the figures go under meta.json's "shrink").

    sandbox: evaluate in a one-worker WorkerPool (default: only for crash and
    hang findings, which would take this process down). cheap: shrink under a
    cheaper backend that shows the finding, confirmed under the entry's own
    (_shrink_cheaper); not when `backend` retargets it."""
    from fuzz.findings.store.corpus import Corpus

    entry_dir = Path(entry_dir)
    corpus = Corpus(entry_dir.parent)
    entry = corpus.load(entry_dir)
    p = copy.deepcopy(entry.program)
    if backend:
        p.settings.backend, cheap = backend, False
    if device:
        p.settings.device = device
    pool = None
    if evaluate is None:
        if sandbox is None:
            sandbox = needs_isolation(entry.verdict)
        if sandbox:
            from fuzz.campaign.workers import WorkerPool

            pool = WorkerPool(workers=1, timeout=timeout, rerun=False)
            evaluate = pool_evaluator(pool)
    try:
        # pinned to what its program shows now: an entry recorded under an older signature
        # scheme keeps that key in signature.json, which no judging gives any more
        key = signature(entry.verdict, entry.program).key

        judge = evaluate or evaluate_in_process

        def attempt(q, ev):
            return shrink(q, key, evaluate=ev, time_budget=time_budget, reruns=reruns, relax_families=relax_families,
                          hypothesis_examples=hypothesis_examples, onto=onto, log=log)

        res = _shrink_steadied(p, entry.verdict, key, judge, attempt, log, reruns)
        if res is None and cheap:
            res = _shrink_cheaper(p, entry.verdict, key, judge, attempt, log)
        if res is None:
            res = attempt(p, judge)
    finally:
        if pool is not None:
            pool.close()
    if write and res.reproduced and res.verdict is not None:  # smaller or not: the entry is shrunk now
        corpus.update_shrunk(entry_dir, res.program, res.verdict, res.stats())
    return res
