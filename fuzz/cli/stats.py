"""`shapefuzz stats STATE_DIR`: the summary of a campaign."""

from __future__ import annotations

from fuzz.cli.common import EXIT_BAD_INPUT, EXIT_OK, error


def add_parser(subparsers):
    t = subparsers.add_parser("stats", help="summary of a campaign state dir")
    t.add_argument("state_dir", help="a campaign's state dir (run's --state)")
    t.add_argument("--json", action="store_true", help="print the summary as JSON")
    t.set_defaults(fn=cmd)
    return t


def cmd(args) -> int:
    from fuzz.campaign.progress import print_summary
    from fuzz.campaign.state import CampaignState, StateError

    try:
        summary = CampaignState.load_summary(args.state_dir)
    except StateError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    from fuzz.files import disk_use

    from fuzz import pch

    summary["disk"] = dict(disk_use(args.state_dir), kept_header_bytes=pch.kept_bytes())
    print_summary(summary, as_json=args.json)
    return EXIT_OK
