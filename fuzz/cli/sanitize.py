"""`shapefuzz sanitize ENTRY`: a corpus entry's finding under compute-sanitizer
(CUDA). It runs the full judging harness generated from the entry's validated
program, never a script the entry stores, and migrates an entry of an older
layout (its stored harness.py goes)."""

from __future__ import annotations

from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error, parse_duration


def add_parser(subparsers):
    z = subparsers.add_parser("sanitize", help="re-run a corpus entry's finding under compute-sanitizer (CUDA): "
                              "the harness its program generates; writes ENTRY/sanitizer.txt")
    z.add_argument("entry", help="a corpus entry's directory")
    z.add_argument("--timeout", type=parse_duration, default=600.0, help="for the sanitized run (default 600s)")
    z.set_defaults(fn=cmd)
    return z


def cmd(args) -> int:
    from fuzz.findings.store.corpus import Corpus, CorpusError
    from fuzz.findings.store.repro_files import drop_stored_harness
    from fuzz.findings.sanitizer import find_sanitizer, sanitize_entry
    from fuzz.judge.backends import not_allowed

    d = Path(args.entry)
    try:
        entry = Corpus(d.parent).load(d)
    except CorpusError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    why = not_allowed(getattr(entry.program.settings, "backend", ""))
    if why:  # the harness would import it
        error(why)
        return EXIT_BAD_INPUT
    if not find_sanitizer():
        error("compute-sanitizer is not installed (looked on PATH and in /usr/local/cuda/bin)")
        return EXIT_BAD_INPUT
    try:
        drop_stored_harness(Corpus(d.parent), d)
        text = sanitize_entry(str(d), timeout=args.timeout)
    except (CorpusError, OSError) as e:
        error(str(e))
        return EXIT_BAD_INPUT
    print(text)
    return EXIT_OK
