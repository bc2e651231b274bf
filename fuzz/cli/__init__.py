"""Command line: shapefuzz check | run | followup | sanitize | stats | repro | ops | shrink | dedupe | replay |
report | triage | bugs | versions | bench | upstream | export-tests.

One module per subcommand (fuzz/cli/NAME.py: `add_parser(subparsers)` and
`cmd(args) -> int`), what they share in fuzz/cli/common.py. Library modules
never import this package.
"""

from __future__ import annotations

import argparse
import sys

from fuzz.cli import (bench, bugs, check, dedupe, export_tests, followup, ops, replay, report, repro, run, sanitize,
                      shrink, stats, triage, upstream, versions)
from fuzz.cli.common import EXIT_BAD_INPUT, Parser, error

SUBCOMMANDS = (check, run, followup, sanitize, stats, repro, ops, shrink, dedupe, replay, report, triage, bugs,
               versions, bench, upstream, export_tests)  # help order


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(prog="shapefuzz", description="Property-based fuzzing of dynamic shapes in "
                                 "PyTorch compilers: compiled vs eager over a size schedule.")
    sub = ap.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        parser = module.add_parser(sub)
        if not getattr(module, "JUDGES_PROGRAMS", True):
            continue
        parser.add_argument(
            "--allow-backend", action="append", default=[], metavar="MODULE",
            help="let a program's module:attr backend import MODULE (a program file alone never imports one; "
                 "--backend module:attr allows its module too); repeatable")
    return ap


def _allow_backends(args) -> None:
    """The modules this command line lets a module:attr backend import."""
    from fuzz.judge.backends import allow_modules

    named = getattr(args, "backend", None)
    given = list(getattr(args, "allow_backend", ()))  # (a command that judges nothing has no --allow-backend)
    allow_modules(given + ([named.partition(":")[0]] if named and ":" in named else []))


def _leave_tmp_as_found() -> None:
    """Importing torch._inductor.config makes an empty /tmp/torchinductor_<user>: where this run made
    it and nothing was written there, it goes at exit (what shapefuzz compiles writes under its own dirs)."""
    import atexit
    import contextlib
    import getpass
    import os
    import tempfile

    try:
        d = os.path.join(tempfile.gettempdir(), f"torchinductor_{getpass.getuser()}")
    except (KeyError, OSError):
        return
    def tidy():
        with contextlib.suppress(OSError):  # not empty (another process wrote there): left as it is
            os.rmdir(d)

    if not os.path.exists(d):
        atexit.register(tidy)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    _leave_tmp_as_found()
    try:
        _allow_backends(args)
        return args.fn(args)
    except KeyboardInterrupt:
        print("shapefuzz: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - bad input is one line; anything else is a bug and keeps its traceback
        if not _bad_input(e):
            raise
        error(" ".join(str(e).split()))
        return EXIT_BAD_INPUT


def _bad_input(e: Exception) -> bool:
    """Whether e says the input is bad (a program, corpus entry, state dir,
    known-issues file, device or backend that cannot be used), not that
    shapefuzz is."""
    from fuzz.campaign.state import StateError
    from fuzz.devices import DeviceError
    from fuzz.findings.corpus import CorpusError
    from fuzz.findings.known import KnownIssuesError
    from fuzz.judge.backends import BackendError
    from fuzz.program.ir import ProgramError

    return isinstance(e, (ProgramError, CorpusError, StateError, KnownIssuesError, DeviceError, BackendError))
