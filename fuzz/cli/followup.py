"""`shapefuzz followup STATE`: finish a campaign's pending follow-up jobs
(shrink and merge, sanitizer; triage after `run --triage`; fuzz/campaign/followups/runner.py), e.g. after
`shapefuzz run --no-wait`, a Ctrl-C or a kill. Rerunning the campaign's own
command does the same, besides any cases left."""

from __future__ import annotations

import os
import sys

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error, print_json


def add_parser(subparsers):
    """Register `shapefuzz followup STATE [--json]`."""
    f = subparsers.add_parser("followup", help="finish a campaign's pending follow-ups (shrink and merge; triage "
                              "after `run --triage`)",
                              description=__doc__.split("\n\n", 1)[0])
    f.add_argument("state_dir", help="the campaign's state dir (run's --state)")
    f.add_argument("--corpus", default=None, metavar="DIR",
                   help="the corpus the campaign saved its findings in (as run's --corpus; default STATE/corpus)")
    f.add_argument("--json", action="store_true", help="print the job counts as JSON")
    f.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="compute the jobs on a Ray cluster (as `run --ray`; the corpus is written here)")
    f.set_defaults(fn=cmd)
    return f


def cmd(args) -> int:
    from fuzz.campaign.followups.supervisor import FollowUps
    from fuzz.campaign.state_files import other_corpus

    if not os.path.exists(os.path.join(args.state_dir, "config.json")):
        error(f"{args.state_dir} is not a campaign state dir (no config.json)")
        return EXIT_BAD_INPUT
    cluster = None
    if args.ray is not None:
        from fuzz.campaign.cluster.pool import RayError, connect

        try:
            cluster = connect(None if args.ray == "auto" else args.ray)
        except RayError as e:
            error(str(e))
            return EXIT_BAD_INPUT
    try:
        jobs = FollowUps(args.state_dir, args.corpus, ray=cluster.gcs if cluster else None)  # reads jobs.jsonl
        elsewhere = other_corpus(args.state_dir, args.corpus)
        if elsewhere:
            error(elsewhere)
            return EXIT_BAD_INPUT
        return _finish(args, jobs)
    finally:
        if cluster is not None:
            cluster.close()


def _finish(args, jobs) -> int:
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if args.json else (lambda m: print(m, flush=True))
    pending = jobs.pending
    if pending:
        say(f"{pending} follow-up job{'s' * (pending > 1)} pending; running them (Ctrl-C is safe: "
            f"run this again to resume; log {jobs.log_path})")
    try:
        counts = jobs.finish(say, every=10.0)
    except KeyboardInterrupt:
        jobs.stop()
        say("interrupted; run the same command again to resume")
        return 130
    failed = [j for j in jobs.log.jobs.values() if j.state == "failed"]
    if args.json:
        print_json({**counts, "failed_jobs": {j.id: j.detail for j in failed}})
        return EXIT_OK
    say(f"follow-ups: {counts['done']} done, {counts['skipped']} skipped, {counts['failed']} failed, "
        f"{counts['pending']} pending")
    for j in failed:
        say(f"  failed {j.id}: {j.detail}")
    return EXIT_OK
