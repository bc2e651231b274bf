"""`shapefuzz check CASE`: run one case and print its verdict.

The case is judged in a sandboxed process by default (the kind's
judge_isolated: a fresh `python -m fuzz check --in-process`): a compiler that
segfaults or hangs gives a CRASH or HANG verdict (exit 1) instead of taking
this process down. --in-process judges it here (faster by a process start;
what the sandbox runs)."""

from __future__ import annotations

from fuzz.cli.common import (EXIT_BAD_INPUT, EXIT_BUG, EXIT_OK, cannot_run, device_arg, error, load_case, override,
                             parse_duration, print_json)


def add_parser(subparsers):
    c = subparsers.add_parser("check", help="run one case and print its verdict (exit 0 ok, 1 bug, 2 bad input)",
                              description=__doc__.split("\n\n", 1)[1])
    c.add_argument("case", help="a program JSON file")
    c.add_argument("--backend", help="override: eager, aot_eager, inductor, openxla or module:attr")
    c.add_argument("--device", type=device_arg, help="override: cpu, cuda, cuda:1, ...")
    c.add_argument("--json", action="store_true", help="print the verdict as JSON")
    c.add_argument("--in-process", action="store_true",
                   help="judge in this process, without the sandbox (a crash or hang takes it down)")
    c.add_argument("--timeout", type=parse_duration, default=300.0,
                   help="the sandbox's time limit; past it the case is a hang (default 300s)")
    c.set_defaults(fn=cmd)
    return c


def cmd(args) -> int:
    from fuzz.judge.isolated import JudgeError
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
    try:
        v = kind.judge(p) if args.in_process else kind.judge_isolated(p, timeout=args.timeout)
    except JudgeError as e:
        error(f"{args.case}: could not be judged: {' '.join(str(e).split())}")
        return EXIT_BAD_INPUT
    if args.json:
        print_json(v.to_dict())
    else:
        print(f"{args.case}: {v.summary()}")
        print(kind.describe_run(p, v))
    if v.outcome is Outcome.INVALID:
        return EXIT_BAD_INPUT
    return EXIT_BUG if v.is_finding else EXIT_OK
