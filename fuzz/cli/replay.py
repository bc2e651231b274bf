"""`shapefuzz replay [CORPUS]`: which corpus entries still fail (fuzz/findings/replay.py)."""

from __future__ import annotations

# through the module, not its names: tests replace fuzz.findings.replay.replay
from fuzz.findings import replay as R

from fuzz.cli.common import EXIT_BAD_INPUT, count, error, parse_duration, print_json


def add_parser(subparsers):
    """Register `shapefuzz replay [CORPUS] [--json] [--fail-on-fixed] [--timeout S] [--jobs N]`."""
    r = subparsers.add_parser(
        "replay", help="rerun every corpus entry's repro against the installed torch: still-failing, fixed, "
        "changed or error", description=R.__doc__.split("\n\n", 1)[1].split("Exit status", 1)[0].strip(),
        epilog="exit status: 0 every entry still failing or fixed; 1 some entry changed or could not be run "
        "(or, with --fail-on-fixed, is fixed); 2 no such corpus directory",
    )
    r.add_argument("corpus", nargs="?", default="corpus", help="corpus directory (default corpus/)")
    r.add_argument("--json", action="store_true", help="print the rows as JSON")
    r.add_argument("--fail-on-fixed", action="store_true", help="exit 1 when an entry is fixed, too")
    r.add_argument("--timeout", type=parse_duration, default=600.0, help="per subprocess (default 600s)")
    r.add_argument("--jobs", "-j", type=count(1), default=1, help="entries replayed at once (default 1)")
    r.set_defaults(fn=cmd)
    return r


def cmd(args) -> int:
    try:
        rows = R.replay(args.corpus, timeout=args.timeout, jobs=args.jobs)
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
