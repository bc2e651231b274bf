"""Sustained cases/s of a campaign state dir: cases recorded per second over
its steady part, leaving out the workers' start (until the first WARMUP cases)
and the tail (after the time limit or the wind-down, when only the last cases finish).
With --workers N it also says where the workers' time went in that window:
the seconds a case took in its worker (worker_s_per_case; it grows when the
CPUs are oversubscribed) and the share of the N workers' time spent on cases
(busy; under 1 when workers waited for programs or were lent to follow-ups).

    python3 scripts/case_rate.py runs/gpu/state [--skip-first 60] [--skip-last 30] [--workers 16]
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
    ap.add_argument("--workers", type=int, default=None, help="the campaign's workers: report their busy share")
    args = ap.parse_args()
    at, seconds = [], []
    with open(os.path.join(args.state, "cases.jsonl")) as f:
        for line in f:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:  # a torn last line
                continue
            if "at" in row:
                at.append(row["at"])
                seconds.append((row["at"], row.get("seconds", 0.0), row.get("compile_seconds", 0.0)))
    if len(at) < 2:
        raise SystemExit(f"{args.state}: fewer than 2 cases with a time ('at'); older state dirs have none")
    at.sort()
    lo, hi = at[0] + args.skip_first, at[-1] - args.skip_last
    try:  # a timed campaign's wind-down: no new cases after it, only the last ones finishing
        hi = min(hi, json.load(open(os.path.join(args.state, "state.json")))["wind_down_at"])
    except (OSError, ValueError, KeyError):
        pass
    window = [t for t in at if lo <= t <= hi]
    if hi <= lo or len(window) < 2:
        raise SystemExit(f"{args.state}: the run is too short for that window")
    out = {"cases": len(at), "span_s": round(at[-1] - at[0], 1), "window_s": round(hi - lo, 1),
           "window_cases": len(window), "cases_per_second": round(len(window) / (hi - lo), 3)}
    spent = [(s, c) for t, s, c in seconds if lo <= t <= hi]
    worker_s = sum(s for s, _ in spent)
    out["worker_s_per_case"] = round(worker_s / len(spent), 3)
    out["compile_s_per_case"] = round(sum(c for _, c in spent) / len(spent), 3)
    if args.workers:
        out["busy"] = round(worker_s / (args.workers * (hi - lo)), 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
