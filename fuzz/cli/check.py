"""`shapefuzz check CASE`: run one case and print its verdict."""

from __future__ import annotations

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_BUG, EXIT_OK, load_case, override, print_json, unknown_backend


def add_parser(subparsers):
    c = subparsers.add_parser("check", help="run one case and print its verdict (exit 0 ok, 1 bug, 2 bad input)")
    c.add_argument("case", help="a program JSON file")
    c.add_argument("--backend", help="override: eager, aot_eager, inductor, openxla or module:attr")
    c.add_argument("--device", help="override: cpu, cuda, cuda:1, ...")
    c.add_argument("--json", action="store_true", help="print the verdict as JSON")
    c.set_defaults(fn=cmd)
    return c


def cmd(args) -> int:
    from fuzz.judge.runner import run_case
    from fuzz.judge.verdict import Outcome
    from fuzz.kinds import is_step_program

    p = load_case(args.case, steps_ok=True)
    if is_step_program(p):
        return _check_steps(p, args)
    p = override(p, args)
    if unknown_backend(p.settings.backend):
        return EXIT_BAD_INPUT
    v = run_case(p)
    if args.json:
        print_json(v.to_dict())
    else:
        print(f"{args.case}: {v.summary()}")
        print(f"  backend={p.settings.backend} device={p.settings.device} calls={p.calls} "
              f"recompiles={v.recompiles} seconds={v.seconds:.2f}")
        if v.rule:
            print(f"  expected error ({v.rule}); not a bug")
    if v.outcome is Outcome.INVALID:
        return EXIT_BAD_INPUT
    return EXIT_BUG if v.is_finding else EXIT_OK


def _check_steps(p, args) -> int:
    from fuzz.judge.steps import known_issue, run_step_program
    from fuzz.judge.verdict import Outcome

    v = run_step_program(p)
    if args.json:
        print_json(v.to_dict())
    else:
        print(f"{args.case}: {v.summary()}")
        label = known_issue(v)
        print(f"  torch_xla step program: {sum(len(b.steps) for b in p.blocks)} steps, "
              f"compiles={v.numbers.get('compiles')} seconds={v.seconds:.2f}" + (f"; known: {label}" if label else ""))
    if v.outcome is Outcome.INVALID:
        return EXIT_BAD_INPUT
    return EXIT_BUG if v.is_finding else EXIT_OK
