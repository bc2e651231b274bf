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


def load_case(path: str, steps_ok: bool = False):
    """A Program from a case file (a program, or {"program": ..., "verdict": ...});
    with steps_ok, a torch_xla StepProgram too."""
    from fuzz.kinds import is_step_program, load_program, unwrap_case
    from fuzz.program.ir import ProgramError

    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ProgramError(f"cannot read {path}: {e.strerror}") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProgramError(f"{path} is not valid JSON: {e}") from None
    d = unwrap_case(d)
    if is_step_program(d) and not steps_ok:
        raise ProgramError(f"{path} is a torch_xla step program: this command takes a compiled-function program")
    return load_program(d)


def override(p, args):
    """The program with --backend and --device (when given) in its settings."""
    if getattr(args, "backend", None):
        p.settings.backend = args.backend
    if getattr(args, "device", None):
        p.settings.device = args.device
    return p


def error(message: str) -> None:
    """`shapefuzz: MESSAGE` on stderr."""
    print(f"shapefuzz: {message}", file=sys.stderr)


def unknown_backend(name: str) -> bool:
    """True (after saying why) when `name` resolves to no torch.compile backend."""
    from fuzz.judge.backends import BackendError, resolve

    try:
        resolve(name)
    except BackendError as e:
        error(str(e))
        return True
    return False


def print_json(obj) -> None:
    print(json.dumps(obj, indent=1))
