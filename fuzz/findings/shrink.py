"""Shrinking a finding to a minimal program with the same signature.

`shrink(program, key)` shrinks a compiled Program with its signature key
pinned; `shrink_entry(dir)` shrinks a corpus entry and rewrites it through
Corpus.update_shrunk. The loop (cache, cost-ordered fixpoint, time budget,
flakiness re-checks) is fuzz/findings/shrink_engine.py; the passes, cost and
canonical form of compiled programs are fuzz/findings/shrink_compiled.py;
torch_xla step programs have their own passes and evaluator in
fuzz/findings/shrink_steps.py.

Crashes and hangs can only be shrunk in a sandbox: pass
`evaluate=pool_evaluator(WorkerPool(workers=1, rerun=False))`.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Callable

from fuzz.program.ir import Program
from fuzz.kinds import is_step_file
from fuzz.findings.shrink_compiled import COMPILED, canonical, cost, hypothesis_stage, max_rank, remove_ops
from fuzz.findings.shrink_engine import Engine, ShrinkResult
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Verdict
from fuzz.campaign.workers import needs_isolation

__all__ = ["DEFAULT_RERUNS", "ShrinkResult", "canonical", "cost", "evaluate_in_process", "max_rank",
           "pool_evaluator", "remove_ops", "shrink", "shrink_entry"]

Evaluate = Callable[[Program], Verdict]

DEFAULT_RERUNS = 3


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
           hypothesis_examples: int = 0, hypothesis_seed: int = 0,
           log: Callable[[str], None] | None = None) -> ShrinkResult:
    """Shrink `program` while its verdict keeps signature `target_signature_key`.

    evaluate(program) -> Verdict defaults to run_case in this process (without
    its rerun); pass pool_evaluator(pool) for crashes and hangs. The budget
    bounds the shrinking; the final re-checks (`reruns` evaluations of the
    result) run after it. The original is evaluated first: if it does not
    reproduce (after up to `reruns` retries) the result has reproduced=False."""
    engine = Engine(COMPILED, evaluate or evaluate_in_process, key=target_signature_key,
                    relax_families=relax_families, time_budget=time_budget, log=log)
    figures: dict = {}

    def prelude(e: Engine) -> None:
        figures.update(hypothesis_stage(e, hypothesis_examples, hypothesis_seed))

    res = engine.run(copy.deepcopy(program), reruns=reruns, prelude=prelude if hypothesis_examples > 0 else None)
    res.hypothesis = figures
    return res


def shrink_entry(entry_dir, *, evaluate: Evaluate | None = None, time_budget: float = 300.0,
                 reruns: int = DEFAULT_RERUNS, backend: str | None = None, device: str | None = None,
                 sandbox: bool | None = None, timeout: float = 300.0, relax_families: bool = True,
                 hypothesis_examples: int = 0, write: bool = True,
                 log: Callable[[str], None] | None = None) -> ShrinkResult:
    """Shrink a corpus entry with its signature pinned and, when a smaller
    program reproduces reliably, replace its program.json, verdict.json and
    repro.py (Corpus.update_shrunk: the first original is kept as
    original_program.json, the figures go under meta.json's "shrink").

    sandbox: evaluate in a one-worker WorkerPool (default: only for crash and
    hang findings, which would take this process down)."""
    from fuzz.findings.corpus import Corpus

    entry_dir = Path(entry_dir)
    corpus = Corpus(entry_dir.parent)
    entry = corpus.load(entry_dir)
    p = copy.deepcopy(entry.program)
    if backend:
        p.settings.backend = backend
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
        res = shrink(p, entry.key, evaluate=evaluate, time_budget=time_budget, reruns=reruns,
                     relax_families=relax_families, hypothesis_examples=hypothesis_examples, log=log)
    finally:
        if pool is not None:
            pool.close()
    if write and res.reproduced and res.verdict is not None and canonical(res.program) != canonical(entry.program):
        corpus.update_shrunk(entry_dir, res.program, res.verdict, res.stats())
    return res


# -- command line ------------------------------------------------------------------

def add_parser(subparsers) -> None:
    """Register `shapefuzz shrink CASE_OR_ENTRY [--time-budget S] [--backend B] [--json] ...`."""
    from fuzz.cli import parse_duration

    s = subparsers.add_parser(
        "shrink", help="shrink a finding (a program JSON or a corpus entry) with its signature pinned",
        description="A CASE (program JSON) is judged first and its signature pinned; the shrunk program is "
                    "written to -o (default CASE.shrunk.json). An ENTRY (corpus directory) keeps its "
                    "signature; its program.json, verdict.json and repro.py are replaced by the shrunk form "
                    "(original_program.json keeps the original). Exit 0: shrunk and reproduced; 2: bad input "
                    "or the finding does not reproduce.")
    s.add_argument("target", metavar="CASE_OR_ENTRY")
    s.add_argument("--time-budget", type=parse_duration, default=300.0, help="seconds of shrinking (default 300)")
    s.add_argument("--backend", help="override the program's backend")
    s.add_argument("--device", help="override the program's device")
    s.add_argument("--reruns", type=int, default=DEFAULT_RERUNS, help="re-checks of the result (flakiness)")
    s.add_argument("--sandbox", action="store_true", default=None,
                   help="evaluate in a worker process (default for crash/hang entries)")
    s.add_argument("--timeout", type=parse_duration, default=300.0, help="per case, in the sandbox")
    s.add_argument("--exact-families", dest="relax_families", action="store_false",
                   help="keep every op family of a value finding (its exact signature key)")
    s.add_argument("--relax-families", action="store_true", default=True,
                   help="value outcomes: accept programs with a subset of the op families")
    s.add_argument("--hypothesis", type=int, default=0, metavar="N",
                   help="first run hypothesis.find with N examples over the restricted strategy")
    s.add_argument("-o", "--output", help="CASE: where to write the shrunk program")
    s.add_argument("--dry-run", action="store_true", help="ENTRY: do not rewrite the entry")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.add_argument("-v", "--verbose", action="store_true", help="print every accepted step")
    s.set_defaults(fn=cmd_shrink)


def cmd_shrink(args) -> int:
    from fuzz.judge.backends import BackendError, resolve

    log = (lambda m: print(m, file=sys.stderr, flush=True)) if args.verbose else None
    target = Path(args.target)
    if is_step_file(target):
        return _cmd_shrink_steps(target, args)
    if target.is_dir():
        res = shrink_entry(target, time_budget=args.time_budget, reruns=args.reruns, backend=args.backend,
                           device=args.device, sandbox=args.sandbox, timeout=args.timeout,
                           relax_families=args.relax_families, hypothesis_examples=args.hypothesis,
                           write=not args.dry_run, log=log)
        out = None
    else:
        from fuzz.cli import _load_case, _override

        p = _override(_load_case(str(target)), args)
        try:
            resolve(p.settings.backend)
        except BackendError as e:
            print(f"shapefuzz: {e}", file=sys.stderr)
            return 2
        pool = None
        evaluate = None
        if args.sandbox:
            from fuzz.campaign.workers import WorkerPool

            pool = WorkerPool(workers=1, timeout=args.timeout, rerun=False)
            evaluate = pool_evaluator(pool)
        try:
            v = (evaluate or evaluate_in_process)(p)
            if not v.is_finding:
                print(f"{target}: {v.summary()}: not a finding, nothing to shrink", file=sys.stderr)
                return 2
            res = shrink(p, signature(v, p).key, evaluate=evaluate, time_budget=args.time_budget,
                         reruns=args.reruns, relax_families=args.relax_families,
                         hypothesis_examples=args.hypothesis, log=log)
        finally:
            if pool is not None:
                pool.close()
        out = Path(args.output) if args.output else target.with_suffix(".shrunk.json")
        if res.reproduced:
            tmp = out.with_name(f".{out.name}.tmp")
            tmp.write_text(res.program.to_json(indent=2) + "\n")
            os.replace(tmp, out)
    if args.json:
        print(json.dumps(res.to_dict(), indent=1))
    else:
        print(f"{target}: {res.summary()}")
        if res.reproduced:
            print(f"  signature: {res.signature.text if res.signature else '-'}")
            if out is not None:
                print(f"  shrunk program: {out}")
            elif not args.dry_run:
                print(f"  entry updated: {target}/program.json (original in original_program.json)")
    return 0 if res.reproduced else 2



def _cmd_shrink_steps(target: Path, args) -> int:
    """`shapefuzz shrink` of a torch_xla step program: fuzz/xla/shrink.py,
    every candidate in a fresh process."""
    from fuzz.cli import _load_case
    from fuzz.findings.shrink_steps import fresh_evaluator, shrink_step_entry, shrink_steps

    try:
        if target.is_dir():
            res = shrink_step_entry(target, time_budget=args.time_budget, reruns=args.reruns,
                                    write=not args.dry_run)
            out = None
        else:
            p = _load_case(str(target), steps_ok=True)
            res = shrink_steps(p, fresh_evaluator(args.timeout), time_budget=args.time_budget)
            out = Path(args.output) if args.output else target.with_suffix(".shrunk.json")
            tmp = out.with_name(f".{out.name}.tmp")
            tmp.write_text(res.program.to_json(indent=2) + "\n")
            os.replace(tmp, out)
    except ValueError as e:  # a bad case (ProgramError), not a finding, another bug, flaky
        print(f"{target}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({**res.stats(), "key": res.key, "verdict": res.verdict.to_dict()}, indent=1))
    else:
        print(f"{target}: {res.summary()}")
        print(f"  verdict: {res.verdict.summary()}")
        if out is not None:
            print(f"  shrunk program: {out}")
        elif not args.dry_run:
            print(f"  entry updated: {target}/program.json (original in original_program.json)")
    return 0
