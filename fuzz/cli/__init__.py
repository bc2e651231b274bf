"""Command line: shapefuzz check | run | sanitize | stats | repro | ops | shrink | replay | report | triage.

One module per subcommand (fuzz/cli/NAME.py: `add_parser(subparsers)` and
`cmd(args) -> int`), what they share in fuzz/cli/common.py.
"""

from __future__ import annotations

import argparse
import sys

from fuzz.cli import check, ops, repro, run, sanitize, stats
from fuzz.cli.common import EXIT_BAD_INPUT, error
# still used by the commands in fuzz/findings/replay.py and shrink.py, until they move here
from fuzz.cli.common import load_case as _load_case, override as _override, parse_duration  # noqa: F401

SUBCOMMANDS = (check, run, sanitize, stats, repro, ops)  # help order


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="shapefuzz", description="Property-based fuzzing of dynamic shapes in "
                                 "PyTorch compilers: compiled vs eager over a size schedule.")
    sub = ap.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)

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
    try:
        return args.fn(args)
    except ProgramError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("shapefuzz: interrupted", file=sys.stderr)
        return 130
