"""`shapefuzz sanitize ENTRY`: a corpus entry's repro under compute-sanitizer (CUDA)."""

from __future__ import annotations

import os

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error, parse_duration


def add_parser(subparsers):
    z = subparsers.add_parser("sanitize", help="re-run a corpus entry's repro under compute-sanitizer (CUDA); "
                              "writes ENTRY/sanitizer.txt")
    z.add_argument("entry", help="a corpus entry directory")
    z.add_argument("--timeout", type=parse_duration, default=600.0, help="for the sanitized run (default 600s)")
    z.set_defaults(fn=cmd)
    return z


def cmd(args) -> int:
    from fuzz.findings.sanitizer import sanitize_entry

    if not os.path.isfile(os.path.join(args.entry, "repro.py")):
        error(f"{args.entry} is not a corpus entry (no repro.py)")
        return EXIT_BAD_INPUT
    text = sanitize_entry(args.entry, timeout=args.timeout)
    if text is None:
        error("compute-sanitizer is not installed (looked on PATH and in /usr/local/cuda/bin)")
        return EXIT_BAD_INPUT
    print(text)
    return EXIT_OK
