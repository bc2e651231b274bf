"""`shapefuzz ops`: the op database."""

from __future__ import annotations

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error, print_json

JUDGES_PROGRAMS = False  # no --allow-backend: it imports no backend


def add_parser(subparsers):
    o = subparsers.add_parser("ops", help="list the op database (the names run's --families and --ops take)",
                              description="One row per op: its family, name, arity and what it does "
                              "(fuzz/program/ops/). run's --families and --ops take these names.")
    o.add_argument("--families", nargs="+", default=None, metavar="FAMILY",
                   help="list the ops of these families only (default: all)")
    o.add_argument("--json", action="store_true", help="print the rows as JSON")
    o.set_defaults(fn=cmd)
    return o


def cmd(args) -> int:
    from fuzz.program.opdb import OPS
    from fuzz.program.opspec import FAMILIES

    bad = sorted(set(args.families or ()) - set(FAMILIES))
    if bad:
        error(f"--families: no family {', '.join(bad)}; the families are {', '.join(FAMILIES)}")
        return EXIT_BAD_INPUT
    ops = [op for op in OPS if not args.families or op.family in args.families]
    if args.json:
        print_json([{"family": op.family, "name": op.name, "arity": op.arity, "doc": op.doc} for op in ops])
        return EXIT_OK
    print(f"{'FAMILY':10s} {'OP':16s} {'ARITY':5s}  WHAT IT DOES")
    for op in ops:
        print(f"{op.family:10s} {op.name:16s} {op.arity:<5d}  {op.doc}")
    print(f"{len(ops)} ops")
    return EXIT_OK
