"""What a campaign gave its user, and what its follow-ups cost, for
one or more finished campaign state dirs, as one table:

- cases and cases/s: overall (first to last case) and steady (scripts/case_rate.py's
  window: the first --skip-first and last --skip-last seconds and the wind-down left out);
- follow-up jobs by type (shrink, triage, sanitize): how many, the median wall
  seconds a job ran (started to its outcome; every version of jobs.jsonl has it) and,
  where jobs.jsonl records it (fuzz/cputime.py), the median CPU-seconds of its compute
  and of the standalone checks (a repro in a fresh process) it ran;
- follow-up CPU-seconds per entry made: every job of the entry, compute and checks
  (wall seconds where CPU is not recorded), median and total;
- distinct bugs after clustering: the corpus's entries (re-keyed and merged; those set
  aside in unconfirmed/ left out), how many still unshrunk, and the findings a known-issues
  rule counted (apart: no entry), with the rules;
- the time from the first case to the first finding of each distinct bug, and bugs/hour.

    python3 scripts/followup_cost.py STATE [STATE ...] [--label NAME ...] [--json]

The corpus is the one state.json names (--corpus to give it, one per state). Reads only;
imports fuzz for the corpus's index (run it from a checkout, PYTHONPATH=.).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TYPES = ("shrink", "triage", "sanitize")


def _jsonl(path: Path) -> list[dict]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:  # a torn line
                    continue
                if isinstance(row, dict):
                    out.append(row)
    except OSError:
        pass
    return out


def case_rates(state: Path, skip_first: float, skip_last: float) -> dict:
    at = sorted(r["at"] for r in _jsonl(state / "cases.jsonl") if isinstance(r.get("at"), (int, float)))
    out = {"cases": len(at), "start": at[0] if at else None, "span_s": round(at[-1] - at[0], 1) if at else 0.0}
    if len(at) < 2:
        return {**out, "overall": None, "steady": None}
    out["overall"] = round(len(at) / (at[-1] - at[0]), 3)
    lo, hi = at[0] + skip_first, at[-1] - skip_last
    try:
        hi = min(hi, json.loads((state / "state.json").read_text())["wind_down_at"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    window = [t for t in at if lo <= t <= hi]
    out["steady"] = round(len(window) / (hi - lo), 3) if hi > lo and len(window) > 1 else None
    return out


def job_costs(state: Path) -> dict:
    """Per job: type, entry, wall seconds of its last run, CPU-seconds by kind (when recorded)."""
    jobs: dict = {}
    for r in _jsonl(state / "jobs.jsonl"):
        jid, ev = r.get("job"), r.get("event")
        if ev == "queued":
            jobs.setdefault(jid, {"type": r.get("type"), "entry": r.get("entry"), "state": "queued", "wall": 0.0})
            continue
        job = jobs.get(jid)
        if job is None:
            continue
        if ev == "started":
            job["started"] = r.get("time")
        elif ev in ("done", "skipped", "failed") and job["state"] == "queued":
            job["state"] = ev
            if job.get("started") and r.get("time"):
                job["wall"] += max(0.0, r["time"] - job["started"])
            if isinstance(r.get("cpu"), dict):
                job["cpu"] = r["cpu"]
    return jobs


def _cost(job: dict) -> float:
    """A job's CPU-seconds (compute, checks and the runner's share), else its wall seconds."""
    cpu = job.get("cpu")
    return sum(v for v in cpu.values() if isinstance(v, (int, float))) if cpu else job["wall"]


def _median(xs) -> float | None:
    xs = list(xs)
    return round(statistics.median(xs), 1) if xs else None


def corpus_figures(corpus: Path, findings: list[dict], start: float | None) -> dict:
    from fuzz.findings.store.corpus import Corpus

    c = Corpus(corpus)
    entries = [e for e in c.entries()]
    first: dict = {}
    for f in findings:
        if f.get("known") or not f.get("key"):
            continue
        held = c.resolve(f["key"])
        if held is not None and isinstance(f.get("time"), (int, float)):
            first[held.name] = min(first.get(held.name, f["time"]), f["time"])
    known = [f for f in findings if f.get("known")]
    times = sorted(round(t - start, 1) for t in first.values()) if start else []
    return {"entries": len(entries), "unshrunk": sum(not e.minimal for e in entries),
            "known_hits": len(known), "known_rules": len({f["known"] for f in known}), "time_to_bug_s": times}


def figures(state: Path, corpus: Path | None, skip_first: float, skip_last: float) -> dict:
    snap = {}
    try:
        snap = json.loads((state / "state.json").read_text())
    except (OSError, ValueError):
        pass
    corpus = corpus or Path(snap.get("corpus_dir") or state / "corpus")
    rates = case_rates(state, skip_first, skip_last)
    jobs = job_costs(state)
    ended = [j for j in jobs.values() if j["state"] != "queued"]
    by_type = {}
    for t in TYPES:
        js = [j for j in ended if j["type"] == t]
        if js:
            by_type[t] = {"jobs": len(js), "median_wall_s": _median(j["wall"] for j in js),
                          "median_cpu_s": _median(j["cpu"].get("compute", 0) + j["cpu"].get("runner", 0)
                                                  for j in js if j.get("cpu")),
                          "median_checks_cpu_s": _median(j["cpu"].get("checks", 0) for j in js if j.get("cpu"))}
    per_entry: dict = {}
    for j in ended:
        per_entry[j["entry"]] = per_entry.get(j["entry"], 0.0) + _cost(j)
    out = {"state": str(state), **rates, "jobs": by_type, "pending": len(jobs) - len(ended),
           "cpu_recorded": any(j.get("cpu") for j in ended),
           "followup_s_per_entry_median": _median(per_entry.values()),
           "followup_s_total": round(sum(per_entry.values()), 1), "entries_followed": len(per_entry)}
    out.update(corpus_figures(corpus, _jsonl(state / "findings.jsonl"), rates["start"]))
    hours = rates["span_s"] / 3600
    out["bugs_per_hour"] = round(out["entries"] / hours, 1) if hours > 0 else None
    return out


def table(rows: list[dict], labels: list[str]) -> str:
    def cell(v) -> str:
        return "-" if v is None else str(v)
    cols = [("cases", lambda r: r["cases"]), ("cases/s overall", lambda r: r["overall"]),
            ("cases/s steady", lambda r: r["steady"])]
    for t in TYPES:
        cols.append((f"{t} jobs / median s (cpu, checks)", lambda r, t=t: (
            None if t not in r["jobs"] else
            f"{r['jobs'][t]['jobs']} / {cell(r['jobs'][t]['median_wall_s'])} "
            f"({cell(r['jobs'][t]['median_cpu_s'])}, {cell(r['jobs'][t]['median_checks_cpu_s'])})")))
    cols += [("follow-up s per entry, median (total)", lambda r: f"{cell(r['followup_s_per_entry_median'])} "
              f"({r['followup_s_total']}{'' if r['cpu_recorded'] else ', wall'})"),
             ("jobs pending", lambda r: r["pending"]),
             ("distinct bugs (unshrunk)", lambda r: f"{r['entries']} ({r['unshrunk']})"),
             ("known-rule hits (rules)", lambda r: f"{r['known_hits']} ({r['known_rules']})"),
             ("bugs/hour", lambda r: r["bugs_per_hour"]),
             ("time to each bug, s", lambda r: " ".join(f"{t:g}" for t in r["time_to_bug_s"]) or None)]
    lines = ["| | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(cell(get(r)) for r in rows) + " |" for name, get in cols]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("states", nargs="+", help="campaign state dirs")
    ap.add_argument("--label", action="append", default=[], help="a column's name, one per state (default: its path)")
    ap.add_argument("--corpus", action="append", default=[], help="a state's corpus, one per state (default: state.json's)")
    ap.add_argument("--skip-first", type=float, default=60.0, help="seconds after the first case left out of steady")
    ap.add_argument("--skip-last", type=float, default=30.0, help="seconds before the last case left out of steady")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON, one object per state")
    args = ap.parse_args(argv)
    corpora = [Path(c) for c in args.corpus] + [None] * len(args.states)
    rows = [figures(Path(s), corpora[i], args.skip_first, args.skip_last) for i, s in enumerate(args.states)]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        labels = args.label + [os.path.basename(os.path.normpath(s)) for s in args.states[len(args.label):]]
        print(table(rows, labels))
        if not all(r["cpu_recorded"] for r in rows):
            print("\n(wall: that jobs.jsonl records no CPU-seconds (an older version): each job's wall seconds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
