"""`shapefuzz dedupe CORPUS`: one entry per bug (fuzz/findings/dedupe.py).

Shrinks every entry not shrunk yet (each within --time-budget), re-keys it
by its minimal signature and merges entries that end at the same key. It
also migrates entries of an older layout: the full harness they stored
(harness.py) goes, as it is generated on demand now. With --dry-run nothing
is written: it lists the merges it would make (entries not shrunk yet are
still shrunk, in memory, to find their keys)."""

from __future__ import annotations

import sys
from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, count, error, parse_duration, print_json


def add_parser(subparsers):
    """Register `shapefuzz dedupe CORPUS [--dry-run] [--time-budget S] [--reshrink] [--json]`."""
    d = subparsers.add_parser("dedupe", help="shrink what is unshrunk, re-key every entry by its minimal "
                              "signature and merge entries of one bug",
                              description=__doc__.split("\n\n", 1)[1])
    d.add_argument("corpus", help="a corpus directory")
    d.add_argument("--dry-run", action="store_true", help="list the merges, write nothing")
    d.add_argument("--time-budget", type=parse_duration, default=300.0,
                   help="shrinking per entry (default 300s; the re-checks run after it)")
    d.add_argument("--timeout", type=parse_duration, default=300.0, help="per case, in the sandbox (crash/hang)")
    d.add_argument("--reruns", type=count(0), default=None, help="re-checks of a shrunk program (default 3)")
    d.add_argument("--reshrink", action="store_true",
                   help="shrink again entries that are shrunk but not re-keyed (e.g. by an older shrinker, "
                   "without the neutral-op pass)")
    d.add_argument("--json", action="store_true", help="print the plan as JSON (progress on stderr)")
    d.add_argument("-v", "--verbose", action="store_true", help="print every accepted shrink step")
    d.set_defaults(fn=cmd)
    return d


def cmd(args) -> int:
    from fuzz.findings.dedupe import dedupe
    from fuzz.findings.shrink.entry import DEFAULT_RERUNS

    root = Path(args.corpus)
    if not root.is_dir():
        error(f"{root} is not a corpus directory")
        return EXIT_BAD_INPUT
    step_log = (lambda m: print(m, file=sys.stderr, flush=True)) if args.verbose else None
    # each entry's line as it is settled (JSON: on stderr, the object alone on stdout)
    say = (lambda m: print(m, file=sys.stderr if args.json else sys.stdout, flush=True))
    plan = dedupe(root, write=not args.dry_run, time_budget=args.time_budget, timeout=args.timeout,
                  reruns=DEFAULT_RERUNS if args.reruns is None else args.reruns, reshrink=args.reshrink,
                  log=step_log, note=say)
    before = len(plan.settlements)
    merges = {k: v for k, v in plan.merges().items() if len(v) > 1}
    if args.json:
        print_json({"dry_run": args.dry_run, "entries_before": before, "entries_after": plan.entries_after(before),
                    "settlements": [{"source": s.source, "key": s.key, "merged": s.merged, "shrunk_now": s.shrunk_now,
                                     "onto": s.onto, "reason": s.reason} for s in plan.settlements],
                    "merges": merges, "migrated": plan.migrated, "errors": plan.errors})
        return EXIT_OK
    for key, files in sorted(plan.migrated.items()):
        say(f"{key}: {'would be migrated' if args.dry_run else 'migrated'} ({', '.join(files)}: the full harness "
            "is generated on demand now)")
    verb = "would merge" if args.dry_run else "merged"
    for key, sources in sorted(merges.items()):
        say(f"{verb} {len(sources)} entries into {key}: {', '.join(sorted(sources))}")
    for e in plan.errors:
        error(f"unreadable entry skipped: {e}")
    say(f"{before} entries -> {plan.entries_after(before)}" + (" (dry run: nothing written)" if args.dry_run else ""))
    return EXIT_OK
