"""Sustained cases/s of a campaign state dir: cases recorded per second over
its steady part, leaving out the workers' start (until the first WARMUP cases)
and the tail (after the time limit, when only the last cases finish).

    python3 scripts/case_rate.py runs/gpu/state [--skip-first 60] [--skip-last 30]
"""

from __future__ import annotations

import argparse
import json
import os


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state")
    ap.add_argument("--skip-first", type=float, default=60.0, help="seconds after the first case left out")
    ap.add_argument("--skip-last", type=float, default=30.0, help="seconds before the last case left out")
    args = ap.parse_args()
    at = []
    with open(os.path.join(args.state, "cases.jsonl")) as f:
        for line in f:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:  # a torn last line
                continue
            if "at" in row:
                at.append(row["at"])
    if len(at) < 2:
        raise SystemExit(f"{args.state}: fewer than 2 cases with a time ('at'); older state dirs have none")
    at.sort()
    lo, hi = at[0] + args.skip_first, at[-1] - args.skip_last
    window = [t for t in at if lo <= t <= hi]
    if hi <= lo or len(window) < 2:
        raise SystemExit(f"{args.state}: the run is too short for that window")
    print(json.dumps({"cases": len(at), "span_s": round(at[-1] - at[0], 1), "window_s": round(hi - lo, 1),
                      "window_cases": len(window), "cases_per_second": round(len(window) / (hi - lo), 3)}))


if __name__ == "__main__":
    main()
