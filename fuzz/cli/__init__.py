"""Command line: shapefuzz check | run | stats | repro | ops | replay | report | triage | shrink."""

from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT = 0, 1, 2


def _load_case(path: str, steps_ok: bool = False):
    """A Program from a case file (a program, or {"program": ..., "verdict": ...});
    with steps_ok, a torch_xla StepProgram too."""
    from fuzz.program.ir import ProgramError
    from fuzz.kinds import is_step_program, load_program, unwrap_case

    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ProgramError(f"cannot read {path}: {e.strerror}") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProgramError(f"{path} is not valid JSON: {e}") from None
    d = unwrap_case(d)
    if is_step_program(d) and not steps_ok:
        raise ProgramError(f"{path} is a torch_xla step program: this command takes a compiled-function program")
    return load_program(d)


def _check_steps(p, args) -> int:
    from fuzz.judge.verdict import Outcome
    from fuzz.judge.steps import known_issue, run_step_program

    v = run_step_program(p)
    if args.json:
        print(json.dumps(v.to_dict(), indent=1))
    else:
        print(f"{args.case}: {v.summary()}")
        label = known_issue(v)
        print(f"  torch_xla step program: {sum(len(b.steps) for b in p.blocks)} steps, "
              f"compiles={v.numbers.get('compiles')} seconds={v.seconds:.2f}" + (f"; known: {label}" if label else ""))
    if v.outcome is Outcome.INVALID:
        return EXIT_BAD_INPUT
    return EXIT_BUG if v.is_finding else EXIT_OK


def _override(p, args):
    if getattr(args, "backend", None):
        p.settings.backend = args.backend
    if getattr(args, "device", None):
        p.settings.device = args.device
    return p


def cmd_check(args) -> int:
    from fuzz.judge.backends import BackendError, resolve
    from fuzz.judge.runner import run_case
    from fuzz.judge.verdict import Outcome

    from fuzz.kinds import is_step_program

    p = _load_case(args.case, steps_ok=True)
    if is_step_program(p):
        return _check_steps(p, args)
    p = _override(p, args)
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


def parse_duration(text: str) -> float:
    """'90', '90s', '30m', '8h', '1d' -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    t = text.strip().lower()
    try:
        return float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 90s, 30m, 8h)") from None


def _default_state_dir(args) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in args.backend)
    return os.path.join("runs", f"{safe}-{args.device.replace(':', '')}-seed{args.seed}")


def _cuda_devices(args):
    if not args.device.startswith("cuda"):
        return None
    if args.gpus:
        return [int(x) for x in args.gpus.split(",")]
    import torch

    return list(range(torch.cuda.device_count())) or None


def cmd_run(args) -> int:
    from fuzz.judge.backends import BackendError, resolve
    from fuzz.campaign.driver import CampaignConfig, run_campaign
    from fuzz.campaign.progress import print_summary
    from fuzz.campaign.state import StateError

    if args.backend == "xla":  # torch_xla step programs, not a torch.compile backend
        import importlib.util

        if importlib.util.find_spec("torch_xla") is None:
            print("shapefuzz: --backend xla needs torch_xla, which this Python does not have; set it up with "
                  "`bash scripts/setup-xla.sh` and run `.venv-xla/bin/python -m fuzz run --backend xla ...` "
                  "(docs/xla.md)", file=sys.stderr)
            return EXIT_BAD_INPUT
        if args.device != "cpu":
            print("shapefuzz: --backend xla runs on the PJRT device PJRT_DEVICE names (default CPU); "
                  "leave --device at cpu", file=sys.stderr)
            return EXIT_BAD_INPUT
    else:
        try:
            resolve(args.backend)
        except BackendError as e:
            print(f"shapefuzz: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
    devices = _cuda_devices(args)
    workers = args.workers
    if workers is None:
        workers = len(devices) * args.workers_per_gpu if devices else 1
    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed, max_cases=args.max_cases,
                         time_limit=args.time, max_findings=args.max_findings, max_ops=args.max_ops,
                         modes=tuple(args.modes) if args.modes else None, options_menu=args.options_menu,
                         state_dir=args.state or _default_state_dir(args), corpus_dir=args.corpus,
                         workers=workers, devices=devices, workers_per_gpu=args.workers_per_gpu, timeout=args.timeout,
                         known_issues=args.known_issues, shrink=args.shrink, triage=args.triage, sanitize=args.sanitize, shrink_budget=args.shrink_budget)
    limit = f"max_cases={cfg.max_cases}" if cfg.max_cases else ""
    limit += f" time={cfg.time_limit:.0f}s" if cfg.time_limit else ""
    print(f"shapefuzz run: backend={cfg.backend} device={cfg.device} seed={cfg.seed} {limit.strip()} "
          f"workers={cfg.workers or 'in-process'} state={cfg.state_dir} corpus={cfg.corpus_dir}", flush=True)
    try:
        res = run_campaign(cfg)
    except StateError as e:
        print(f"shapefuzz: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print_summary(res.summary, as_json=args.json)
    if res.new_entries and not args.json:
        print("new corpus entries:\n  " + "\n  ".join(res.new_entries))
    if res.interrupted:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    return EXIT_BUG if sum(res.summary["findings_new"].values()) else EXIT_OK


def cmd_stats(args) -> int:
    from fuzz.campaign.progress import print_summary
    from fuzz.campaign.state import CampaignState, StateError

    try:
        summary = CampaignState.load_summary(args.state_dir)
    except StateError as e:
        print(f"shapefuzz: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print_summary(summary, as_json=args.json)
    return EXIT_OK


def cmd_sanitize(args) -> int:
    from fuzz.findings.sanitizer import sanitize_entry

    if not os.path.isfile(os.path.join(args.entry, "repro.py")):
        print(f"shapefuzz: {args.entry} is not a corpus entry (no repro.py)", file=sys.stderr)
        return EXIT_BAD_INPUT
    text = sanitize_entry(args.entry, timeout=args.timeout)
    if text is None:
        print("shapefuzz: compute-sanitizer is not installed (looked on PATH and in /usr/local/cuda/bin)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    print(text)
    return EXIT_OK


def cmd_repro(args) -> int:
    from fuzz.program.codegen import repro_source

    p = _override(_load_case(args.case), args)
    src = repro_source(p, title=f"repro of {args.case}")
    if args.output:
        with open(args.output, "w") as f:
            f.write(src)
    else:
        sys.stdout.write(src)
    return EXIT_OK


def cmd_ops(args) -> int:
    from fuzz.program.opdb import OPS

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

    r = sub.add_parser("run", help="a fuzz campaign: generate, judge in sandboxed workers, save findings",
                       description="Resumable: run the same command again after a crash or Ctrl-C.")
    r.add_argument("--backend", default="inductor", help="a torch.compile backend (inductor, aot_eager, openxla, "
                   "...), or xla: torch_xla step programs (in-place ops, views, syncs; needs torch_xla, docs/xla.md)")
    r.add_argument("--device", default="cpu")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--max-cases", type=int, default=None, help="stop after this many cases (default: 20 "
                   "unless --time is given)")
    r.add_argument("--time", type=parse_duration, default=None, help="stop after this long, e.g. 30m, 8h")
    r.add_argument("--max-findings", type=int, default=None,
                   help="stop once this many findings (new or known) are logged, e.g. 1 in CI")
    r.add_argument("--max-ops", type=int, default=6)
    r.add_argument("--modes", nargs="+", default=None, type=lambda m: None if m == "default" else m,
                   help="torch.compile modes to sample, e.g. default max-autotune reduce-overhead "
                   "(default: all four on CUDA, default on CPU)")
    r.add_argument("--options-menu", choices=["auto", "cuda", "cpu", "none"], default="auto",
                   help="Inductor flags to sample (strategies/settings.py; auto: by device, none on CPU)")
    r.add_argument("--workers", type=int, default=None,
                   help="sandboxed workers (default: one per GPU, 1 on CPU); 0 judges in this process")
    r.add_argument("--workers-per-gpu", type=int, default=1)
    r.add_argument("--gpus", default=None, help="CUDA device indices, e.g. 0,1 (default: all)")
    r.add_argument("--timeout", type=parse_duration, default=300.0, help="per case (default 300s)")
    r.add_argument("--state", default=None, help="state dir (default runs/BACKEND-DEVICE-seedS)")
    r.add_argument("--corpus", default="corpus", help="corpus dir for new findings (default corpus/)")
    r.add_argument("--known-issues", default=None, help="known upstream issues (default: CORPUS/known_issues.json, "
                   "else corpus/known_issues.json)")
    r.add_argument("--no-shrink", dest="shrink", action="store_false",
                   help="do not shrink new corpus entries in the background")
    r.add_argument("--no-triage", dest="triage", action="store_false",
                   help="do not ablate new corpus entries (backends, static shapes, flags) in the background")
    r.add_argument("--no-sanitize", dest="sanitize", action="store_false",
                   help="CUDA: do not re-run memory-error findings under compute-sanitizer")
    r.add_argument("--shrink-budget", type=parse_duration, default=300.0, help="per new entry (default 300s)")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(fn=cmd_run)

    z = sub.add_parser("sanitize", help="re-run a corpus entry's repro under compute-sanitizer (CUDA); "
                       "writes ENTRY/sanitizer.txt")
    z.add_argument("entry")
    z.add_argument("--timeout", type=parse_duration, default=600.0)
    z.set_defaults(fn=cmd_sanitize)

    t = sub.add_parser("stats", help="summary of a campaign state dir")
    t.add_argument("state_dir")
    t.add_argument("--json", action="store_true")
    t.set_defaults(fn=cmd_stats)

    g = sub.add_parser("repro", help="print the standalone repro.py of a case")
    g.add_argument("case")
    g.add_argument("-o", "--output")
    g.add_argument("--backend")
    g.add_argument("--device")
    g.set_defaults(fn=cmd_repro)

    o = sub.add_parser("ops", help="list the op database")
    o.set_defaults(fn=cmd_ops)

    from fuzz.findings.replay import add_parser as add_replay, add_report_parser, add_triage_parser

    from fuzz.findings.shrink import add_parser as add_shrink

    add_shrink(sub)
    add_replay(sub)
    add_report_parser(sub)
    add_triage_parser(sub)
    return ap


def main(argv=None) -> int:
    from fuzz.program.ir import ProgramError

    args = build_parser().parse_args(argv)
    if args.command == "run" and args.max_cases is None and args.time is None:
        args.max_cases = 20
    try:
        return args.fn(args)
    except ProgramError as e:
        print(f"shapefuzz: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("shapefuzz: interrupted", file=sys.stderr)
        return 130
