"""`shapefuzz repro CASE`: the standalone repro.py of a case."""

from __future__ import annotations

import sys

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, device_arg, error, load_case, override


def add_parser(subparsers):
    g = subparsers.add_parser("repro", help="print the standalone repro.py of a case")
    g.add_argument("case")
    g.add_argument("-o", "--output")
    g.add_argument("--backend")
    g.add_argument("--device", type=device_arg)
    g.set_defaults(fn=cmd)
    return g


def cmd(args) -> int:
    from fuzz.judge.backends import not_allowed
    from fuzz.program.loading import repro_source

    try:
        p = override(load_case(args.case), args)
    except ValueError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    why = not_allowed(getattr(p.settings, "backend", ""))
    if why:  # the repro would import it
        error(why)
        return EXIT_BAD_INPUT
    src = repro_source(p, title=f"repro of {args.case}")
    if args.output:
        try:
            with open(args.output, "w") as f:
                f.write(src)
        except OSError as e:
            error(f"cannot write {args.output}: {e.strerror or e}")
            return EXIT_BAD_INPUT
    else:
        sys.stdout.write(src)
    return EXIT_OK
