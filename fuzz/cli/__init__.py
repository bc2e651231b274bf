"""Command line: shapefuzz check | run | followup | sanitize | stats | repro | ops | shrink | dedupe | replay |
report | triage | bugs | versions | bench | upstream | export-tests.

One module per subcommand (fuzz/cli/NAME.py: `add_parser(subparsers)` and
`cmd(args) -> int`), what they share in fuzz/cli/common.py. Library modules
never import this package.
"""

from __future__ import annotations

import argparse
import errno
import sys

from fuzz.cli import (bench, bugs, check, dedupe, export_tests, followup, ops, replay, report, repro, run, sanitize,
                      shrink, stats, triage, upstream, versions)
from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, Parser, error

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
    from fuzz.terminal import PlainStream

    args = build_parser().parse_args(argv)
    _leave_tmp_as_found()
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PlainStream(out), PlainStream(err)  # no control character from data drives a terminal
    try:
        _allow_backends(args)
        return args.fn(args)
    except KeyboardInterrupt:
        print("shapefuzz: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went (`shapefuzz ops | head -3`): stop quietly, as a pipe's writer does
        _stdout_to_devnull(out)
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - bad input is one line; anything else is a bug and keeps its traceback
        if not _bad_input(e):
            raise
        error(" ".join(_why(e).split()))
        return EXIT_BAD_INPUT
    finally:
        sys.stdout, sys.stderr = out, err


def _stdout_to_devnull(out) -> None:
    """Point stdout's descriptor at /dev/null, so the interpreter's last flush meets no closed pipe either."""
    import contextlib
    import os

    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)


# What the machine said when a file given could not be read or written (a read-only or full disk, a missing
# dir, a directory where a file was wanted): the user's to fix, said in one line
_ENVIRONMENT = frozenset(getattr(errno, n) for n in ("EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT", "ENOENT",
                                                      "ENOTDIR", "EISDIR", "ELOOP", "ENAMETOOLONG", "EEXIST",
                                                      "ENXIO", "ETXTBSY") if hasattr(errno, n))


def _why(e: Exception) -> str:
    if isinstance(e, OSError) and e.errno in _ENVIRONMENT and not isinstance(e, _own_errors()):
        return f"{e.filename}: {e.strerror}" if e.filename else f"{e.strerror or e}"
    return str(e)


def _own_errors() -> tuple:
    from fuzz.files import UnsafePath

    return (UnsafePath,)


def _bad_input(e: Exception) -> bool:
    """Whether e says the input is bad (a program, corpus entry, state dir,
    known-issues file, device or backend that cannot be used), not that
    shapefuzz is."""
    from fuzz.campaign.state import StateError
    from fuzz.datafile import DataFileError
    from fuzz.devices import DeviceError
    from fuzz.files import UnsafePath
    from fuzz.findings.store.corpus import CorpusError
    from fuzz.findings.status.known import KnownIssuesError
    from fuzz.judge.backends import BackendError
    from fuzz.program.ir import ProgramError

    return isinstance(e, (ProgramError, CorpusError, StateError, KnownIssuesError, DeviceError, BackendError,
                          DataFileError, UnsafePath)) or isinstance(e, OSError) and e.errno in _ENVIRONMENT
