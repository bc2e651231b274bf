"""Command line: shapefuzz check | run | repro | ops."""

from __future__ import annotations

import argparse
import json
import sys

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT = 0, 1, 2


def _load_case(path: str):
    """A Program from a case file (a program, or {"program": ..., "verdict": ...})."""
    from .ir import Program, ProgramError
    from .typecheck import typecheck

    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ProgramError(f"cannot read {path}: {e.strerror}") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProgramError(f"{path} is not valid JSON: {e}") from None
    if isinstance(d, dict) and "program" in d and "schema" not in d:
        d = d["program"]
    p = Program.from_dict(d)
    typecheck(p)
    return p


def _override(p, args):
    if getattr(args, "backend", None):
        p.settings.backend = args.backend
    if getattr(args, "device", None):
        p.settings.device = args.device
    return p


def cmd_check(args) -> int:
    from .backends import BackendError, resolve
    from .runner import run_case
    from .verdict import Outcome

    p = _override(_load_case(args.case), args)
    try:
        resolve(p.settings.backend)
    except BackendError as e:
        print(f"shapefuzz: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    v = run_case(p)
    if args.json:
        print(json.dumps(v.to_dict(), indent=1))
    else:
        print(f"{args.case}: {v.summary()}")
        print(f"  backend={p.settings.backend} device={p.settings.device} calls={p.calls} "
              f"recompiles={v.recompiles} seconds={v.seconds:.2f}")
        if v.rule:
            print(f"  expected error ({v.rule}); not a bug")
    if v.outcome is Outcome.INVALID:
        return EXIT_BAD_INPUT
    return EXIT_BUG if v.is_finding else EXIT_OK


def cmd_run(args) -> int:
    from .backends import BackendError, resolve
    from .campaign import CampaignConfig, run_campaign

    try:
        resolve(args.backend)
    except BackendError as e:
        print(f"shapefuzz: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed, max_cases=args.max_cases,
                         time_limit=args.time, max_ops=args.max_ops, out_dir=args.out)
    print(f"shapefuzz run: backend={cfg.backend} device={cfg.device} seed={cfg.seed} "
          f"max_cases={cfg.max_cases} out={cfg.out_dir}", flush=True)
    res = run_campaign(cfg, log=lambda s: print(s, flush=True))
    summary = res.to_dict()
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"checked {summary['cases']} programs in {summary['seconds']} s "
              f"({summary['cases_per_second']} cases/s, median {summary['median_case_seconds']} s/case, "
              f"compile share {summary['compile_share']})")
        for outcome, n in sorted(res.outcomes.items(), key=lambda kv: -kv[1]):
            print(f"  {outcome:26s} {n}")
        print(f"findings: {summary['findings']}" + (f" (saved in {cfg.out_dir})" if res.findings and cfg.out_dir else ""))
    return EXIT_BUG if res.findings else EXIT_OK


def cmd_repro(args) -> int:
    from .codegen import repro_source

    p = _override(_load_case(args.case), args)
    src = repro_source(p, title=f"repro of {args.case}")
    if args.output:
        with open(args.output, "w") as f:
            f.write(src)
    else:
        sys.stdout.write(src)
    return EXIT_OK


def cmd_ops(args) -> int:
    from .opdb import OPS

    for op in OPS:
        print(f"{op.family:10s} {op.name:16s} arity={op.arity}  {op.doc}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="shapefuzz", description="Property-based fuzzing of dynamic shapes in "
                                 "PyTorch compilers: compiled vs eager over a size schedule.")
    sub = ap.add_subparsers(dest="command", required=True)

    c = sub.add_parser("check", help="run one case and print its verdict (exit 0 ok, 1 bug, 2 bad input)")
    c.add_argument("case", help="a program JSON file")
    c.add_argument("--backend", help="override: eager, aot_eager, inductor, openxla or module:attr")
    c.add_argument("--device", help="override: cpu, cuda, cuda:1, ...")
    c.add_argument("--json", action="store_true", help="print the verdict as JSON")
    c.set_defaults(fn=cmd_check)

    r = sub.add_parser("run", help="generate and check programs")
    r.add_argument("--backend", default="inductor")
    r.add_argument("--device", default="cpu")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--max-cases", type=int, default=20)
    r.add_argument("--time", type=float, default=None, help="stop after this many seconds")
    r.add_argument("--max-ops", type=int, default=6)
    r.add_argument("--out", default=None, help="write findings (JSON + repro.py) here")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(fn=cmd_run)

    g = sub.add_parser("repro", help="print the standalone repro.py of a case")
    g.add_argument("case")
    g.add_argument("-o", "--output")
    g.add_argument("--backend")
    g.add_argument("--device")
    g.set_defaults(fn=cmd_repro)

    o = sub.add_parser("ops", help="list the op database")
    o.set_defaults(fn=cmd_ops)
    return ap


def main(argv=None) -> int:
    from .ir import ProgramError

    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except ProgramError as e:
        print(f"shapefuzz: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("shapefuzz: interrupted", file=sys.stderr)
        return 130
