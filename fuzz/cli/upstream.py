"""`shapefuzz upstream ENTRY|CORPUS`: search GitHub's issues for each entry's
bug and record the candidates with the date (fuzz/findings/status/upstream_search.py)."""

from __future__ import annotations

from pathlib import Path

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error, parse_duration


def add_parser(subparsers):
    from fuzz.findings.status.upstream_search import API_ENV, DEFAULT_API

    u = subparsers.add_parser(
        "upstream", help="search GitHub's pytorch issues for each entry's masked message, innermost frame and ops; "
        "record the candidates with the date in meta.json (upstream)",
        description="Search the GitHub issue search API (repo:pytorch/pytorch, and pytorch/xla for XLA entries, "
        "is:issue) for each entry's bug and record the candidates in the entry's meta.json `upstream` field. "
        "A token in GITHUB_TOKEN or GH_TOKEN is sent when set. Without a network the entry is recorded "
        "'not searched (no network)'; a rate limit (403/429) ends the run and is recorded as such.")
    u.add_argument("target", help="a corpus entry's directory, or a corpus (every entry)")
    u.add_argument("--api", default=None, metavar="URL",
                   help=f"the GitHub API base URL (default: ${API_ENV}, else {DEFAULT_API})")
    u.add_argument("--timeout", type=parse_duration, default=20.0, help="per request (default 20s)")
    u.add_argument("--interval", type=float, default=None, metavar="SECONDS",
                   help="seconds between requests (default 6.5 without a token, 2 with one: the search API's "
                        "rate limit)")
    u.add_argument("--dry-run", action="store_true", help="print the results, write nothing into the entries")
    u.set_defaults(fn=cmd)
    return u


def cmd(args) -> int:
    from fuzz.findings.store.corpus import Corpus, CorpusError
    from fuzz.findings.replay import entry_dirs
    from fuzz.findings.status.upstream_search import (NO_NETWORK, RATE_LIMITED, Client, Result, merged_record,
                                               search_entry, summary)

    root = Path(args.target)
    if not root.is_dir():
        error(f"no entry or corpus directory {str(root)!r}")
        return EXIT_BAD_INPUT
    dirs = [root] if (root / "program.json").is_file() else entry_dirs(root)
    if not dirs:
        error(f"{str(root)!r} holds no corpus entry")
        return EXIT_BAD_INPUT
    if args.interval is not None and not 0 <= args.interval <= 3600:
        error(f"--interval must be within 0..3600 seconds, got {args.interval}")
        return EXIT_BAD_INPUT
    try:
        client = Client(args.api, timeout=args.timeout, interval=args.interval)
    except ValueError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    stop = None  # no network or a rate limit: the rest are not searched, said once per entry
    bad = False
    for d in dirs:
        corpus = Corpus(d.parent)
        try:
            entry = corpus.load(d)
        except CorpusError as e:
            print(f"{d.name}  {e}", flush=True)
            bad = True
            continue
        result = Result(status=stop.status, detail=stop.detail) if stop else search_entry(entry, client)
        if result.status in (NO_NETWORK, RATE_LIMITED):
            stop = stop or result
        if not args.dry_run:
            corpus.set_meta(d, "upstream", merged_record(entry.meta.get("upstream"), result))
        print(f"{d.name}  {summary(result)}", flush=True)
    return EXIT_BAD_INPUT if bad else EXIT_OK
