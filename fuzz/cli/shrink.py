"""`shapefuzz shrink CASE_OR_ENTRY`: shrink a finding with its signature pinned
(fuzz/findings/shrink/entry.py; torch_xla step programs: fuzz/findings/shrink/steps.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from fuzz.findings.shrink.entry import DEFAULT_RERUNS

from fuzz.cli.common import EXIT_BAD_INPUT, cannot_run, count, device_arg, error, load_case, override, parse_duration


def add_parser(subparsers):
    """Register `shapefuzz shrink CASE_OR_ENTRY [--time-budget S] [--backend B] [--json] ...`."""
    s = subparsers.add_parser(
        "shrink", help="shrink a finding (a program JSON or a corpus entry) with its signature pinned",
        description="A CASE (program JSON) is judged first and its signature pinned; the shrunk program is "
                    "written to -o (default CASE.shrunk.json). An ENTRY (corpus directory) keeps its "
                    "signature; its program.json, verdict.json and repro.py are replaced by the shrunk form "
                    "(original_program.json keeps the original). Exit 0: shrunk and reproduced; 2: bad input "
                    "or the finding does not reproduce.")
    s.add_argument("target", metavar="CASE_OR_ENTRY", help="a program JSON file (a finding) or a corpus entry "
                   "directory")
    s.add_argument("--time-budget", type=parse_duration, default=300.0, help="seconds of shrinking (default 300)")
    s.add_argument("--backend", help="override the program's backend")
    s.add_argument("--device", type=device_arg, help="override the program's device")
    s.add_argument("--reruns", type=count(0), default=DEFAULT_RERUNS, help="re-checks of the result (flakiness)")
    s.add_argument("--sandbox", action="store_true", default=None,
                   help="evaluate in a worker process (default for crash/hang entries)")
    s.add_argument("--timeout", type=parse_duration, default=300.0, help="per case, in the sandbox")
    s.add_argument("--exact-families", dest="relax_families", action="store_false",
                   help="keep every op family of a value finding (its exact signature key)")
    s.add_argument("--relax-families", action="store_true", default=True,
                   help="value outcomes: accept programs with a subset of the op families")
    s.add_argument("--hypothesis", type=count(0), default=0, metavar="N",
                   help="first run hypothesis.find with N examples over the restricted strategy")
    s.add_argument("--fault", default=None, metavar="NAME",
                   help="torch_xla step programs, for testing: plant this fault (fuzz/judge/steps.py FAULTS) "
                   "and judge every candidate in this process")
    s.add_argument("-o", "--output", help="CASE: where to write the shrunk program")
    s.add_argument("--dry-run", action="store_true", help="ENTRY: do not rewrite the entry")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.add_argument("-v", "--verbose", action="store_true", help="print every accepted step")
    s.set_defaults(fn=cmd)
    return s


def cmd(args) -> int:
    from fuzz.kinds import KINDS, kind_of, kind_of_file, named

    log = (lambda m: print(m, file=sys.stderr, flush=True)) if args.verbose else None
    target = Path(args.target)
    kind = kind_of_file(target) or named("compiled")  # unreadable: the compiled kind's loading says why
    asked = {"fault": args.fault, "backend": args.backend, "device": args.device, "sandbox": args.sandbox,
             "hypothesis": args.hypothesis or None}
    foreign = sorted(k for k, v in asked.items() if v and k not in kind.shrink_options)
    if foreign:
        takers = " and ".join(f"{k.noun}s" for k in KINDS.values() if foreign[0] in k.shrink_options)
        error(f"--{foreign[0]} is for {takers} only, and {target} is a {kind.noun}")
        return EXIT_BAD_INPUT
    opts = dict(time_budget=args.time_budget, reruns=args.reruns, timeout=args.timeout, log=log,
                relax_families=args.relax_families, **{k: v for k, v in asked.items() if v is not None})
    out = None
    try:
        if target.is_dir():
            from fuzz.findings.store.corpus import Corpus

            # as for a case file: a device or stack this machine lacks is bad input, not "not reproduced"
            if cannot_run(override(Corpus(target.parent).load(target).program, args)):
                return EXIT_BAD_INPUT
            res = kind.shrink_entry(target, write=not args.dry_run, **opts)
        else:
            p = override(load_case(str(target)), args)
            if cannot_run(p):
                return EXIT_BAD_INPUT
            res = kind_of(p).shrink_case(p, **opts)
            out = Path(args.output) if args.output else target.with_suffix(".shrunk.json")
            if res.reproduced:
                _write(out, res.program)
    except ValueError as e:  # a bad case (ProgramError), not a finding, another bug
        error(f"{target}: {e}")
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(res.to_dict(), indent=1))
    else:
        print(f"{target}: {res.summary()}")
        if res.reproduced:
            print(f"  signature: {res.signature.text if res.signature else '-'}")
            if res.verdict is not None:
                print(f"  verdict: {res.verdict.summary()}")
            if out is not None:
                print(f"  shrunk program: {out}")
            elif not args.dry_run:
                print(f"  entry updated: {target}/program.json (original in original_program.json)")
    return 0 if res.reproduced else EXIT_BAD_INPUT


def _write(out: Path, program) -> None:
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(program.to_json(indent=2) + "\n")
    os.replace(tmp, out)
