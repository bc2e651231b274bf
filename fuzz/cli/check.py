"""`shapefuzz check CASE`: run one case and print its verdict."""

from __future__ import annotations

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_BUG, EXIT_OK, cannot_run, error, load_case, override, print_json


def add_parser(subparsers):
    c = subparsers.add_parser("check", help="run one case and print its verdict (exit 0 ok, 1 bug, 2 bad input)")
    c.add_argument("case", help="a program JSON file")
    c.add_argument("--backend", help="override: eager, aot_eager, inductor, openxla or module:attr")
    c.add_argument("--device", help="override: cpu, cuda, cuda:1, ...")
    c.add_argument("--json", action="store_true", help="print the verdict as JSON")
    c.set_defaults(fn=cmd)
    return c


def cmd(args) -> int:
    from fuzz.judge.verdict import Outcome
    from fuzz.kinds import kind_of

    p = load_case(args.case)
    try:
        p = override(p, args)
    except ValueError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    if cannot_run(p):
        return EXIT_BAD_INPUT
    kind = kind_of(p)
    v = kind.judge(p)
    if args.json:
        print_json(v.to_dict())
    else:
        print(f"{args.case}: {v.summary()}")
        print(kind.describe_run(p, v))
    if v.outcome is Outcome.INVALID:
        return EXIT_BAD_INPUT
    return EXIT_BUG if v.is_finding else EXIT_OK
