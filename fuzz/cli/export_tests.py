"""`shapefuzz export-tests CORPUS -o FILE`: the corpus's bugs as one file of
strict-xfail pytest tests for upstream's suite (fuzz/findings/report/export_tests.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error, output_file_problem


def add_parser(subparsers):
    e = subparsers.add_parser(
        "export-tests", help="write the corpus's bugs as one Python file of strict-xfail tests (torch and pytest "
        "only), each named for its entry and naming its bug",
        description=__import__("fuzz.findings.report.export_tests", fromlist=["x"]).__doc__.split("\n\n", 1)[1])
    e.add_argument("corpus", help="the corpus directory (unconfirmed/ entries are left out)")
    e.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the test file to write (e.g. test_shapefuzz_bugs.py); '-' for stdout")
    e.set_defaults(fn=cmd)
    return e


def cmd(args) -> int:
    from fuzz.files import write_atomic
    from fuzz.findings.report.export_tests import export

    root = Path(args.corpus)
    if not root.is_dir():
        error(f"no corpus directory {str(root)!r}")
        return EXIT_BAD_INPUT
    why = output_file_problem(args.output) if args.output != "-" else None
    if why:  # said before the export is made
        error(why)
        return EXIT_BAD_INPUT
    text, keys, skipped = export(root)
    for key, why in skipped:
        print(f"{key}  left out: {why}", file=sys.stderr)
    if not keys:
        error(f"{str(root)!r} has no entry to export ({len(skipped)} left out)")
        return EXIT_BAD_INPUT
    if args.output == "-":
        sys.stdout.write(text)
    else:
        write_atomic(Path(args.output), text)
        print(f"{args.output}: {len(keys)} test(s), {len(skipped)} entr(ies) left out", file=sys.stderr)
    return EXIT_OK
