"""`shapefuzz report ENTRY [--write] [--trace] [--no-triage]`: an issue-ready markdown report of a corpus
entry; an entry a campaign left untriaged is triaged first (fuzz/findings/deferred_triage.py); --trace
first collects a TORCH_TRACE of its repro (fuzz/findings/report/trace.py)."""

from __future__ import annotations

import sys

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, cannot_write, error


def add_parser(subparsers):
    """Register `shapefuzz report ENTRY [--write]`."""
    r = subparsers.add_parser("report", help="print an issue-ready markdown report of a corpus entry")
    r.add_argument("entry", help="a corpus entry directory")
    r.add_argument("--write", action="store_true", help="also save it as report.md in the entry")
    r.add_argument("--trace", action="store_true", help="first run the entry's repro with TORCH_TRACE into "
                   "ENTRY/trace/ (and tlparse's summary, where tlparse is installed); the report points to it")
    r.add_argument("--timeout", type=float, default=600.0, help="seconds the traced repro may run (default 600)")
    r.add_argument("--no-triage", dest="triage", action="store_false",
                   help="do not triage an untriaged entry first (a campaign defers each entry's triage until its "
                   "report): the report then has no ablation, and says how to make one")
    r.add_argument("--triage-timeout", type=float, default=300.0,
                   help="seconds per ablation row when a crash or hang is triaged first (default 300)")
    r.set_defaults(fn=cmd)
    return r


def cmd(args) -> int:
    from fuzz.findings.store.corpus import CorpusError
    from fuzz.kinds import render_report, report_entry

    from fuzz.findings.deferred_triage import triage_if_needed, untriaged_line
    from fuzz.findings.report.trace import TraceError, collect_trace

    def note(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    why = cannot_write(args.entry, "report.md") if args.write else None
    if why:  # said before a triage or a trace runs
        error(why)
        return EXIT_BAD_INPUT
    from fuzz.releases import newest_or_recorded

    newest_or_recorded()  # the index's newest release, asked at most once a day: the report says if it is behind
    try:
        if args.triage:
            missing = triage_if_needed(args.entry, timeout=args.triage_timeout, log=note)
        else:
            missing = untriaged_line(args.entry)
        if missing:
            note(f"note: {missing}")
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
