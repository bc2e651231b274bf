"""`shapefuzz bugs [CORPUS] [--write] [--json]`: one row per distinct bug (fuzz/findings/report/bugs.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, cannot_write, error, print_json


def add_parser(subparsers):
    b = subparsers.add_parser("bugs", help="list the distinct bugs of a corpus: status (new, known upstream, "
                              "fixed), affected versions, short repro, report; --write saves CORPUS/BUGS.md")
    b.add_argument("corpus", nargs="?", default="corpus", help="corpus directory (default corpus/)")
    b.add_argument("--write", action="store_true", help="also write CORPUS/BUGS.md")
    b.add_argument("--json", action="store_true", help="print the rows as JSON")
    b.add_argument("--triage", action="store_true", help="first triage each bug's entry that has no ablation of "
                   "its program (a campaign defers the triage until the report; a few minutes each), where this "
                   "machine can run it: the titles then name what the bug needs")
    b.set_defaults(fn=cmd)
    return b


def cmd(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from fuzz.terminal import markup as escape, raw

    from fuzz.files import write_atomic
    from fuzz.findings.report.bugs import (bug_rows, index_newest, known_in_reference, known_lines, markdown, newest_line,
                                     set_aside_lines, summary_line, untriaged_lines)
    from fuzz.findings.standalone import unconfirmed

    root = Path(args.corpus)
    if not root.is_dir():
        error(f"no corpus directory {str(root)!r}")
        return EXIT_BAD_INPUT
    why = cannot_write(root, "BUGS.md") if args.write else None
    if why:  # said before the rows are made
        error(why)
        return EXIT_BAD_INPUT
    unreadable: list = []
    index, how = index_newest()
    rows = bug_rows(root, unreadable, index)
    if args.triage and _triage_rows(root, rows):
        rows = bug_rows(root, [], index)
    if not rows and not unreadable and not known_in_reference(root) and not unconfirmed(root):
        error(f"{str(root)!r} holds no corpus entry (an entry is a directory with program.json)")
        return EXIT_BAD_INPUT
    if args.write:
        write_atomic(root / "BUGS.md", markdown(rows, root, newest_line(index, how)))
    if args.json:
        print_json([r.to_dict() for r in rows])
        return _unreadable(unreadable)
    table = Table(title=escape(f"{summary_line(rows)} ({root})"), show_lines=False)
    for col in ("bug", "title", "status", "checked on", "repro"):
        table.add_column(col, overflow="fold")
    for r in rows:
        more = f"\n+{len(r.variants)} variant(s)" if r.variants else ""
        table.add_row(escape(r.key + more), escape(r.title), escape(f"{r.status}\n{r.upstream}"), escape(r.checked_on),
                      f"{r.repro_lines} lines" if r.repro_lines else "harness")
    Console(file=raw(sys.stdout), soft_wrap=False, width=200).print(table)
    print(newest_line(index, how))
    for line in (set_aside_lines(root) + known_lines(root) + untriaged_lines(rows))[::2]:  # each paragraph's text
        print(line)
    if args.write:
        print(f"wrote {root / 'BUGS.md'}")
    return _unreadable(unreadable)


def _triage_rows(root: Path, rows: list) -> int:
    """Triage the untriaged entry of each row (fuzz/findings/deferred_triage.py); how many were triaged."""
    from fuzz.findings.deferred_triage import triage_if_needed

    done = 0
    for r in rows:
        if not r.untriaged:
            continue
        try:
            missing = triage_if_needed(root / r.key, log=lambda m: print(m, file=sys.stderr, flush=True))
        except Exception as e:  # noqa: BLE001 - one entry's triage must not stop the list
            missing = f"{r.key}: its triage failed ({type(e).__name__}: {e}); the row goes untriaged"
        if missing:
            print(f"note: {missing}", file=sys.stderr)
        else:
            done += 1
    return done


def _unreadable(errors: list) -> int:
    """One line per entry dir that could not be read (not listed: fix or remove it); exit 2 when there is one."""
    for e in errors:
        error(f"{' '.join(str(e).split())}; not listed")
    return EXIT_BAD_INPUT if errors else EXIT_OK
