"""`shapefuzz report ENTRY`: an issue-ready markdown report of a corpus entry."""

from __future__ import annotations

import sys

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error


def add_parser(subparsers):
    """Register `shapefuzz report ENTRY [--write]`."""
    r = subparsers.add_parser("report", help="print an issue-ready markdown report of a corpus entry")
    r.add_argument("entry", help="a corpus entry directory")
    r.add_argument("--write", action="store_true", help="also save it as report.md in the entry")
    r.set_defaults(fn=cmd)
    return r


def cmd(args) -> int:
    from fuzz.findings.corpus import CorpusError
    from fuzz.kinds import render_report, report_entry

    try:
        text = report_entry(args.entry) if args.write else render_report(args.entry)
    except CorpusError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    sys.stdout.write(text)
    return EXIT_OK
