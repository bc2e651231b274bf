"""`shapefuzz repro CASE`: the standalone repro.py of a case.

`shapefuzz repro ENTRY|CORPUS [--check]`: write each corpus entry's repro.py
(the short repro, where its finding has one) anew from its program and
verdict; with --check, run each short repro standalone in a fresh process: it
must fail the way the finding did, or the entry's repro.py becomes a note on
its harness and meta.json "short_repro" says why.

`shapefuzz repro ENTRY --harness [-o FILE]`: the entry's full judging
harness, generated from its validated program (entries do not store it)."""

from __future__ import annotations

import sys

from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_BUG, EXIT_OK, count, device_arg, error, load_case, override, \
    parse_duration


def add_parser(subparsers):
    g = subparsers.add_parser("repro", help="print the standalone repro.py of a case; or write (and --check) the "
                              "short repros of corpus entries", description=__doc__.split("\n\n", 1)[1])
    g.add_argument("case", help="a program JSON file, a corpus entry's directory, or a corpus")
    g.add_argument("--check", action="store_true", help="entries: run each short repro standalone (exit 1 when one "
                   "does not fail as its finding did)")
    g.add_argument("--timeout", type=parse_duration, default=600.0, help="per short repro run (default 600s)")
    g.add_argument("--jobs", "-j", type=count(1), default=None, help="entries checked at once (default: one per CPU)")
    g.add_argument("--harness", action="store_true", help="a corpus entry: print (or -o: write) its full judging "
                   "harness, generated from its program")
    g.add_argument("-o", "--output", metavar="FILE", help="write the script to FILE instead of printing it")
    g.add_argument("--backend", help="the program's backend instead of its own (a case file, or --harness)")
    g.add_argument("--device", type=device_arg, help="the program's device instead of its own (a case file, or "
                   "--harness)")
    g.set_defaults(fn=cmd)
    return g


def cmd(args) -> int:
    if Path(args.case).is_dir() and not args.harness:
        return _entries(args)
    from fuzz.judge.backends import not_allowed
    from fuzz.program.loading import repro_source

    try:
        p, title = _program(args)
        p = override(p, args)
    except ValueError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    why = not_allowed(getattr(p.settings, "backend", ""))
    if why:  # the repro would import it
        error(why)
        return EXIT_BAD_INPUT
    src = repro_source(p, title=title)
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


def _program(args):
    """(program, the script's title) of a case file, or with --harness of a corpus entry
    (ValueError when it is neither: ProgramError and CorpusError are ValueErrors)."""
    if not args.harness or not Path(args.case).is_dir():
        return load_case(args.case), f"repro of {args.case}"
    from fuzz.findings.store.corpus import Corpus, CorpusError

    d = Path(args.case)
    if not (d / "program.json").is_file():
        raise ValueError(f"{d} is not a corpus entry (no program.json): --harness takes one entry")
    try:
        entry = Corpus(d.parent).load(d)
    except CorpusError as e:
        raise ValueError(str(e)) from None
    return entry.program, f"shapefuzz {entry.key}: {entry.signature.text}"


def _entries(args) -> int:
    """Rewrite (and with --check, check) the scripts of an entry or of every entry of a corpus."""
    from concurrent.futures import ThreadPoolExecutor

    from fuzz.campaign.sizing import size_pool
    from fuzz.findings.store.corpus import Corpus, CorpusError
    from fuzz.findings.replay import entry_dirs
    from fuzz.findings.store.repro_files import check_repro, rewrite_scripts
    from fuzz.judge.backends import BackendError

    root = Path(args.case)
    dirs = [root] if (root / "program.json").is_file() else entry_dirs(root)
    if not dirs:
        error(f"{root} holds no corpus entry (an entry is a directory with program.json)")
        return EXIT_BAD_INPUT

    def one(d):
        corpus = Corpus(d.parent)
        try:
            info = rewrite_scripts(corpus, d, keep_check=not args.check)  # --check: check again
            if args.check:
                info = check_repro(corpus, d, timeout=args.timeout)
        except (CorpusError, BackendError, OSError) as e:  # BackendError: a module:attr backend not allowed
            return d, {"error": str(e)}
        return d, info

    bad = errors = 0
    with ThreadPoolExecutor(max_workers=size_pool(args.jobs).workers) as pool:
        for d, info in pool.map(one, dirs):
            if "error" in info:  # one line on stderr, as every command's errors
                errors += 1
                error(f"{d.name}: {info['error']}")
                continue
            bad += info.get("reproduces") is False
            print(f"{d.name}  {_line(info)}", flush=True)
    return EXIT_BAD_INPUT if errors else EXIT_BUG if bad else EXIT_OK


def _line(info: dict) -> str:
    if "error" in info:
        return f"error: {info['error']}"
    if "lines" not in info:
        return f"no short form ({info.get('full_harness')}): shapefuzz repro ENTRY --harness gives the harness"
    text = f"short repro, {info['lines']} code lines"
    if info.get("not_checked"):
        return f"{text}; not checked here: {info['not_checked']}"
    if info.get("checked"):
        return f"{text}; {'fails as the finding did' if info.get('reproduces') else 'DOES NOT reproduce'}: " \
               f"{info.get('shown')} ({info.get('seconds')} s)"
    return text
