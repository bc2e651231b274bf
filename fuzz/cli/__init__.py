"""Command line: shapefuzz check | run | sanitize | stats | repro | ops | shrink | replay | report | triage.

One module per subcommand (fuzz/cli/NAME.py: `add_parser(subparsers)` and
`cmd(args) -> int`), what they share in fuzz/cli/common.py.
"""

from __future__ import annotations

import argparse
import sys

from fuzz.cli import check, ops, replay, report, repro, run, sanitize, stats, triage
from fuzz.cli.common import EXIT_BAD_INPUT, error
# still used by the shrink command in fuzz/findings/shrink.py, until it moves here
from fuzz.cli.common import load_case as _load_case, override as _override, parse_duration  # noqa: F401

SUBCOMMANDS = (check, run, sanitize, stats, repro, ops, replay, report, triage)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="shapefuzz", description="Property-based fuzzing of dynamic shapes in "
                                 "PyTorch compilers: compiled vs eager over a size schedule.")
    sub = ap.add_subparsers(dest="command", required=True)
    from fuzz.findings.shrink import add_parser as add_shrink

    for module in SUBCOMMANDS[:6]:
        module.add_parser(sub)
    add_shrink(sub)
    for module in SUBCOMMANDS[6:]:
        module.add_parser(sub)
    return ap


def main(argv=None) -> int:
    from fuzz.program.ir import ProgramError

    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except ProgramError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("shapefuzz: interrupted", file=sys.stderr)
        return 130
