"""What the subcommands share: exit codes, the argument parser and the
types that check every option before anything runs, reading a case file,
the --backend/--device override and one-line errors."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: `shapefuzz run: argument --workers:
    must be >= 0, got -1 (see shapefuzz run --help)` on stderr, exit 2."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message} (see {self.prog} --help)\n")


def parse_duration(text: str) -> float:
    """'90', '90s', '30m', '8h', '1d' -> seconds (positive and finite)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    t = text.strip().lower()
    try:
        seconds = float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 90s, 30m, 8h)") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"a duration must be positive and finite, got {text!r}")
    return seconds


def parse_size(text: str) -> int:
    """'20MB', '1.5GB', '500k', '4096' (bytes) -> bytes (positive). Decimal units, as `stats` prints them."""
    units = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
             "t": 10**12, "tb": 10**12}
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in units:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 20MB, 5GB)")
    n = _size_number(m.group(1), units[m.group(2).lower()])
    if n <= 0:
        raise argparse.ArgumentTypeError(f"a size must be positive, got {text!r}")
    return n


def _size_number(text: str, unit: int) -> int:
    value = float(text) * unit
    if not math.isfinite(value) or value > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"a size must be at most {MAX_SIZE // 10**18} EB")
    return int(value)


MAX_SIZE = 9 * 10**18  # bytes: more than any disk, and within a 64-bit count


def count(minimum: int):
    """An argparse type: an int >= minimum."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if n < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {n}")
        return n

    parse.__name__ = f"int >= {minimum}"
    return parse


def device_arg(text: str) -> str:
    """An argparse type: a device string fuzz/devices.py knows (cpu, cuda, cuda:1, xla)."""
    from fuzz.devices import DeviceError, parse

    try:
        return str(parse(text))
    except DeviceError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def missing_device(device: str) -> str | None:
    """Why this machine cannot run on `device` (no CUDA, an index past the
    last GPU), with the fix; None when it can."""
    from fuzz.devices import missing

    why = missing(device)
    return f"--device {device}: {why}; use --device cpu" if why else None


def load_case(path: str):
    """A program of either kind from a case file (a program, or {"program": ..., "verdict": ...})."""
    from fuzz.program.ir import ProgramError
    from fuzz.program.loading import load_program, unwrap_case

    import os

    from fuzz.datafile import DataFileError, read_json
    from fuzz.program.schema import MAX_PROGRAM_BYTES

    if os.path.isdir(path):
        raise ProgramError(f"{path} is a directory; give a program JSON file (a corpus entry's program.json)")
    try:
        d = read_json(path, MAX_PROGRAM_BYTES)
    except DataFileError as e:
        raise ProgramError(str(e).replace(": nested too deeply", ": nested too deeply to be a program")) from None
    try:
        return load_program(unwrap_case(d))
    except RecursionError:
        raise ProgramError(f"{path}: nested too deeply to be a program") from None
    except ProgramError as e:
        raise ProgramError(f"{path}: {e}") from None


def override(p, args):
    """The program with --backend and --device (when given) in its settings;
    ValueError when its kind cannot be re-targeted."""
    from fuzz.kinds import kind_of

    return kind_of(p).retarget(p, backend=getattr(args, "backend", None), device=getattr(args, "device", None))


def cannot_write(path, what: str = "") -> str | None:
    """Why directory `path` (or the directory a file `what` is written into) cannot be written, in one line
    for error(); None when it can. Asked before the work, not after it."""
    import os

    from fuzz.files import check_writable_dir

    target = os.path.join(path, what) if what else str(path)
    try:
        check_writable_dir(path)
    except OSError as e:
        return f"cannot write {target}: {e.strerror or e}"
    return None


def output_file_problem(path) -> str | None:
    """Why a file cannot be written at `path` (its directory is missing or read-only, it is a directory), in
    one line; None when it can."""
    import os

    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"cannot write {path}: it is a directory (give a file name)"
    if not os.path.isdir(parent):
        return f"cannot write {path}: no directory {parent}"
    return cannot_write(parent, os.path.basename(path))


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


def cannot_run(p, retarget: bool = True) -> bool:
    """True (after saying why and how to fix it) when this machine cannot judge p:
    its backend cannot load, or the stack or device it needs is missing.
    retarget=False: the command has no --device to offer as the fix."""
    from fuzz.kinds import kind_of

    kind = kind_of(p)
    if unknown_backend(*kind.runs_on(p)):
        return True
    missing = kind.unavailable(p, retarget=retarget)
    if missing:
        error(missing)
    return bool(missing)


def print_json(obj) -> None:
    print(json.dumps(obj, indent=1))
