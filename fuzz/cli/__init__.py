"""Command line: shapefuzz check | run | followup | sanitize | stats | repro | ops | shrink | dedupe | replay |
report | triage | bench.

One module per subcommand (fuzz/cli/NAME.py: `add_parser(subparsers)` and
`cmd(args) -> int`), what they share in fuzz/cli/common.py. Library modules
never import this package.
"""

from __future__ import annotations

import argparse
import sys

from fuzz.cli import (bench, check, dedupe, followup, ops, replay, report, repro, run, sanitize, shrink, stats,
                      triage)
from fuzz.cli.common import EXIT_BAD_INPUT, error

SUBCOMMANDS = (check, run, followup, sanitize, stats, repro, ops, shrink, dedupe, replay, report, triage,
               bench)  # help order


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="shapefuzz", description="Property-based fuzzing of dynamic shapes in "
                                 "PyTorch compilers: compiled vs eager over a size schedule.")
    sub = ap.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
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
