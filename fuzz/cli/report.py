"""`shapefuzz report ENTRY [--write] [--trace]`: an issue-ready markdown report of a corpus entry;
--trace first collects a TORCH_TRACE of its repro (fuzz/findings/trace.py)."""

from __future__ import annotations

import sys

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error


def add_parser(subparsers):
    """Register `shapefuzz report ENTRY [--write]`."""
    r = subparsers.add_parser("report", help="print an issue-ready markdown report of a corpus entry")
    r.add_argument("entry", help="a corpus entry directory")
    r.add_argument("--write", action="store_true", help="also save it as report.md in the entry")
    r.add_argument("--trace", action="store_true", help="first run the entry's repro with TORCH_TRACE into "
                   "ENTRY/trace/ (and tlparse's summary, where tlparse is installed); the report points to it")
    r.add_argument("--timeout", type=float, default=600.0, help="seconds the traced repro may run (default 600)")
    r.set_defaults(fn=cmd)
    return r


def cmd(args) -> int:
    from fuzz.findings.corpus import CorpusError
    from fuzz.kinds import render_report, report_entry

    from fuzz.findings.trace import TraceError, collect_trace

    try:
        if args.trace:
            rec = collect_trace(args.entry, timeout=args.timeout)
            print(f"trace: {len(rec['files'])} file(s), {rec['bytes'] // 1024} KB in {args.entry}/trace "
                  f"(the {rec['script']} exited {rec['exit']})", file=sys.stderr)
        text = report_entry(args.entry) if args.write else render_report(args.entry)
    except (CorpusError, TraceError) as e:
        error(str(e))
        return EXIT_BAD_INPUT
    sys.stdout.write(text)
    return EXIT_OK
