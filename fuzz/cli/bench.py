"""`shapefuzz bench`: an in-process loop over generated torch_xla step
programs, for measuring (fuzz/campaign/step_bench.py)."""

from __future__ import annotations

import importlib.util

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, count, error, parse_duration


def add_parser(subparsers):
    b = subparsers.add_parser(
        "bench", help="torch_xla: judge generated step programs in this process and print cases/s, outcomes, "
        "cache-hit share and findings (no sandbox, no corpus; needs torch_xla, docs/xla.md)")
    b.add_argument("--count", type=count(1), default=200, help="programs to generate (default 200)")
    b.add_argument("--seed", type=count(0), default=0, help="the seed the programs are drawn from (default 0)")
    b.add_argument("--fault", default=None, help="a planted torch_xla fault (fuzz/judge/steps.py FAULTS), for testing")
    b.add_argument("--time", type=parse_duration, default=None, help="stop after this long, e.g. 1800, 30m")
    b.set_defaults(fn=cmd)
    return b


def cmd(args) -> int:
    if importlib.util.find_spec("torch_xla") is None:
        error("bench needs torch_xla, which this Python does not have; set it up with "
              "`bash scripts/setup-xla.sh` and run `.venv-xla/bin/python -m fuzz bench ...` (docs/xla.md)")
        return EXIT_BAD_INPUT
    from fuzz.campaign.step_bench import run_bench

    res = run_bench(count=args.count, seed=args.seed, fault=args.fault, time_limit=args.time,
                    log=lambda m: print(m, flush=True))
    for line in res.lines():
        print(line)
    return EXIT_OK
