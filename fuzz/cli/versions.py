"""`shapefuzz versions ENTRY|CORPUS [--torch 2.6 2.7 ...]`: which torch releases a bug affects
(fuzz/findings/status/versions.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, count, error, parse_duration


def add_parser(subparsers):
    from fuzz.findings.status.versions import DEFAULT_RELEASES

    v = subparsers.add_parser(
        "versions", help="run entries' short repros under several torch releases (a cached virtualenv each) and "
        "record affected / first fixed in the entries", description=__import__("fuzz.findings.status.versions", fromlist=["x"])
        .__doc__.split("\n\n", 1)[1])
    v.add_argument("target", help="a corpus entry's directory, or a corpus (every entry with a short repro)")
    v.add_argument("--torch", nargs="+", default=list(DEFAULT_RELEASES), metavar="RELEASE",
                   help=f"torch releases; 'newest' is the newest on the package index, whatever a local pip constraint "
                        f"allows (default: "
                        f"{' '.join(DEFAULT_RELEASES)})")
    v.add_argument("--python", nargs="+", default=None, metavar="PYTHON",
                   help="interpreters (with their own torch) to run under instead of cached venvs; CUDA entries "
                        "use this Python's torch unless given")
    v.add_argument("--timeout", type=parse_duration, default=600.0, help="per repro run (default 600s)")
    v.add_argument("--dry-run", action="store_true", help="print the results, write nothing into the entries")
    v.add_argument("--jobs", "-j", type=count(1), default=1,
                   help="entries run at once (the venvs are set up first, one at a time; default 1)")
    v.set_defaults(fn=cmd)
    return v


def cmd(args) -> int:
    from fuzz.findings.report.bugs import versions_text
    from fuzz.findings.store.corpus import Corpus, CorpusError
    from fuzz.findings.replay import entry_dirs
    from fuzz.findings.status.versions import VersionsError, entry_versions, resolve_releases
    from fuzz.judge.backends import BackendError

    try:
        args.torch = resolve_releases(args.torch, log=lambda m: print(f"shapefuzz versions: {m}", file=sys.stderr))
    except VersionsError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    root = Path(args.target)
    if not root.is_dir():
        error(f"no entry or corpus directory {str(root)!r}")
        return EXIT_BAD_INPUT
    dirs = [root] if (root / "program.json").is_file() else entry_dirs(root)
    if not dirs:
        error(f"{str(root)!r} holds no corpus entry")
        return EXIT_BAD_INPUT
    failed, loadable = False, []
    for d in dirs:  # every entry read first: a bad one is one line on stderr, before any venv is made
        try:
            Corpus(d.parent).load(d)
            loadable.append(d)
        except CorpusError as e:
            error(str(e))
            failed = True
    if not loadable:
        return EXIT_BAD_INPUT

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    from concurrent.futures import ThreadPoolExecutor

    from fuzz.findings.status.versions import ensure_env

    try:  # the venvs first, one at a time: parallel pip installs of one release would collide
        needs_envs = not args.python  # CPU entries, and CUDA entries' CPU twins
        for rel in args.torch if needs_envs else ():
            ensure_env(rel, log=log)
    except (CorpusError, VersionsError) as e:
        error(str(e))
        return EXIT_BAD_INPUT

    def one(d):
        corpus = Corpus(d.parent)
        try:
            entry = corpus.load(d)
            from fuzz.program.short_repro import supported

            why = supported(entry.program, entry.verdict)
            if why:
                return d, None, f"skipped: no short repro to run ({why})"
            rec = entry_versions(entry, args.torch, pythons=args.python, timeout=args.timeout, log=log)
        except (CorpusError, VersionsError, BackendError, OSError) as e:  # BackendError: a module not allowed
            return d, None, f"{d}: {e}"
        from fuzz.findings.status.versions import merge_records

        rec = merge_records(entry.meta.get("versions"), rec)  # the releases not run now stay in the range
        if not args.dry_run:
            corpus.set_meta(d, "versions", rec)
        return d, rec, None

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for d, rec, why in pool.map(one, loadable):
            if rec is None and why.startswith("skipped"):
                print(f"{d.name}  {why}", flush=True)
            elif rec is None:  # an error: one line on stderr, as every command's
                failed = True
                error(why)
            else:
                print(f"{d.name}  {versions_text(rec)}", flush=True)
    return EXIT_BAD_INPUT if failed else EXIT_OK
