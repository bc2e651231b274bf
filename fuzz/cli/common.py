"""What the subcommands share: exit codes, durations, reading a case file,
the --backend/--device override and one-line errors."""

from __future__ import annotations

import argparse
import json
import sys

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT = 0, 1, 2


def parse_duration(text: str) -> float:
    """'90', '90s', '30m', '8h', '1d' -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    t = text.strip().lower()
    try:
        return float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 90s, 30m, 8h)") from None


def load_case(path: str):
    """A program of either kind from a case file (a program, or {"program": ..., "verdict": ...})."""
    from fuzz.program.ir import ProgramError
    from fuzz.program.loading import load_program, unwrap_case

    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ProgramError(f"cannot read {path}: {e.strerror}") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProgramError(f"{path} is not valid JSON: {e}") from None
    return load_program(unwrap_case(d))


def override(p, args):
    """The program with --backend and --device (when given) in its settings;
    ValueError when its kind cannot be re-targeted."""
    from fuzz.kinds import kind_of

    return kind_of(p).retarget(p, backend=getattr(args, "backend", None), device=getattr(args, "device", None))


def error(message: str) -> None:
    """`shapefuzz: MESSAGE` on stderr."""
    print(f"shapefuzz: {message}", file=sys.stderr)


def unknown_backend(name: str, device: str = "cpu") -> bool:
    """True (after saying why) when backend `name` cannot run here on `device`."""
    from fuzz.judge.backends import BackendError, check

    try:
        check(name, device)
    except BackendError as e:
        error(str(e))
        return True
    return False


def cannot_run(p) -> bool:
    """True (after saying why and how to fix it) when this machine cannot judge p:
    its backend cannot load, or the stack or device it needs is missing."""
    from fuzz.kinds import kind_of

    kind = kind_of(p)
    if unknown_backend(*kind.runs_on(p)):
        return True
    missing = kind.unavailable(p)
    if missing:
        error(missing)
    return bool(missing)


def print_json(obj) -> None:
    print(json.dumps(obj, indent=1))
