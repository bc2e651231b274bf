"""`shapefuzz replay [CORPUS]`: which corpus entries still fail (fuzz/findings/replay.py)."""

from __future__ import annotations

import sys

# through the module, not its names: tests replace fuzz.findings.replay.replay
from fuzz.findings import replay as R

from fuzz.cli.common import EXIT_BAD_INPUT, count, error, parse_duration, print_json


def add_parser(subparsers):
    """Register `shapefuzz replay [CORPUS] [--json] [--fail-on-fixed] [--timeout S] [--jobs N]`."""
    r = subparsers.add_parser(
        "replay", help="rerun every corpus entry's repro against the installed torch: still-failing, fixed, "
        "changed, error or skipped", description=R.__doc__.split("\n\n", 1)[1].split("Exit status", 1)[0].strip(),
        epilog="one line per entry as it finishes (a live progress bar on a terminal), then the table; with "
        "--json the lines go to stderr and the JSON summary to stdout. Exit status: 0 every entry still failing, "
        "fixed or skipped; 1 some entry changed or could not be run (or, with --fail-on-fixed, is fixed); 2 no "
        "such corpus directory",
    )
    r.add_argument("corpus", nargs="?", default="corpus", help="corpus directory (default corpus/), or one entry's directory")
    r.add_argument("--json", action="store_true", help="print the rows as JSON (progress lines on stderr)")
    r.add_argument("--fail-on-fixed", action="store_true", help="exit 1 when an entry is fixed, too")
    r.add_argument("--timeout", type=parse_duration, default=600.0, help="per subprocess (default 600s)")
    r.add_argument("--jobs", "-j", type=count(1), default=None,
                   help="entries replayed at once (default: one per usable CPU)")
    r.set_defaults(fn=cmd)
    return r


def cmd(args) -> int:
    from rich.console import Console

    from fuzz.terminal import plain, raw

    console = Console(file=raw(sys.stderr if args.json else sys.stdout), soft_wrap=True)
    try:
        if console.is_terminal:
            rows = _replay_live(args, console)
        else:
            def on_row(row, done, total):
                print(plain(R.row_line(row, done, total)), file=console.file, flush=True)

            rows = R.replay(args.corpus, timeout=args.timeout, jobs=args.jobs, on_row=on_row)
    except FileNotFoundError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    status = R.exit_status(rows, fail_on_fixed=args.fail_on_fixed)
    if args.json:
        print_json({"corpus": str(args.corpus), "rows": [r.to_dict() for r in rows], "counts": R.counts(rows),
                    "exit_status": status})
    else:
        R.print_table(rows, title=f"replay of {args.corpus}")
    return status


def _replay_live(args, console):
    """The replay under a rich progress bar, each entry's line printed above it as it finishes."""
    from fuzz.terminal import markup as escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("replay", total=None)

        def on_row(row, done, total):
            bar.update(task, completed=done, total=total)
            style = R.STYLE.get(row.status, "")
            bar.console.print(f"[{style}]{escape(R.row_line(row, done, total))}[/]" if style else
                              escape(R.row_line(row, done, total)))

        return R.replay(args.corpus, timeout=args.timeout, jobs=args.jobs, on_row=on_row)
