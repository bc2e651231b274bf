"""`shapefuzz ops`: the op database."""

from __future__ import annotations

from fuzz.cli.common import EXIT_OK


def add_parser(subparsers):
    o = subparsers.add_parser("ops", help="list the op database")
    o.set_defaults(fn=cmd)
    return o


def cmd(args) -> int:
    from fuzz.program.opdb import OPS

    for op in OPS:
        print(f"{op.family:10s} {op.name:16s} arity={op.arity}  {op.doc}")
    return EXIT_OK
