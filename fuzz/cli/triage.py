"""`shapefuzz triage ENTRY`: ablate a corpus entry and write ablation.json into it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, cannot_run, error, parse_duration, print_json


def add_parser(subparsers):
    """Register `shapefuzz triage ENTRY [--isolate | --in-process] [--timeout S] [--all-flags] [--json]`."""
    t = subparsers.add_parser("triage", help="ablate a corpus entry (backends, static shapes, devices, Inductor "
                              "flags) and write ablation.json into it")
    t.add_argument("entry", help="a corpus entry directory")
    g = t.add_mutually_exclusive_group()
    g.add_argument("--isolate", dest="isolate", action="store_true", default=None,
                   help="judge every variant in a sandboxed worker (default for crash/hang findings)")
    g.add_argument("--in-process", dest="isolate", action="store_false", help="judge every variant in this process")
    t.add_argument("--timeout", type=parse_duration, default=300.0, help="per variant when isolated (default 300s)")
    t.add_argument("--all-flags", action="store_true",
                   help="try every Inductor flag that matters on the device, not only the options the case set")
    t.add_argument("--json", action="store_true", help="print ablation.json instead of a table")
    t.set_defaults(fn=cmd)
    return t


def cmd(args) -> int:
    from fuzz.findings.store.corpus import Corpus, CorpusError
    from fuzz.findings.triage import triage_entry
    from fuzz.kinds import kind_of_file

    kind = kind_of_file(args.entry)
    if kind is not None and kind.triage:
        error(f"{args.entry} is {kind.triage}")
        return EXIT_BAD_INPUT
    try:
        # every variant would fail on a device (or backend) this machine lacks, and
        # overwrite ablation.json with those failures: refuse before judging any
        if cannot_run(Corpus(Path(args.entry).parent).load(args.entry).program, retarget=False):
            return EXIT_BAD_INPUT
        doc = triage_entry(args.entry, isolate=args.isolate, timeout=args.timeout, all_flags=args.all_flags)
    except CorpusError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    if args.json:
        print_json(doc)
    else:
        print_ablation(doc)
        print(f"wrote {Path(args.entry) / 'ablation.json'}")
    return EXIT_OK


def print_ablation(doc: dict, file=None) -> None:
    """ablation.json as a table, then its summary."""
    from rich.console import Console
    from rich.table import Table

    from fuzz.terminal import markup, raw

    console = Console(file=raw(file or sys.stdout), soft_wrap=False)
    table = Table(title=markup(f"ablation of {doc['signature']['key']}: {doc['signature']['text']}"))
    for col in ("axis", "variant", "status", "result"):
        table.add_column(col, overflow="fold")
    style = {"reproduces": "red", "passes": "green", "other": "magenta", "skipped": "dim", "error": "yellow"}
    for r in doc["rows"]:
        result = markup(r["summary"] + (f"\n{r['note']}" if r["note"] else ""))
        status = style.get(r["status"])
        table.add_row(markup(r["axis"]), markup(r["variant"]),
                      f"[{status}]{markup(r['status'])}[/]" if status else markup(r["status"]), result)
    console.print(table)
    console.print_json(json.dumps(doc["summary"]))
