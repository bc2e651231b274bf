"""The generation-mode comparison, side by side at equal time: blind,
swarm, swarm plus coverage guidance and pair-aimed draws, each a fresh
campaign with --coverage (the lines are the measure), run at once, each pinned to
its own CPUs (and GPU), then their follow-ups drained for the same time, then one
table. With --pairs, also the pairwise coverage (scripts/reach.py --pairs) of the
programs each run drew (the same seed's first CASES programs; not for guided, whose
mutants the stream does not hold).

    python benchmarks/compare_modes.py OUT --time 400 --drain 120 --seed 31 \
        --run gpu-blind:cuda:inductor:blind:0-15:0 --run cpu-guided:cpu:aot_eager:guided:48-52

A run is NAME:DEVICE:BACKEND:MODE:CPUS[:GPU], MODE one of blind, swarm, guided
(guided is swarm plus --guided), pair (--pair-aimed). Several runs may name one GPU. Needs Python 3.12 (sys.monitoring) and taskset.
Writes OUT/NAME.log, OUT/NAME-bugs.txt and OUT/modes.json; prints the table."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = {"blind": ["--draw", "blind"], "swarm": ["--swarm"], "guided": ["--swarm", "--guided"], "pair": ["--pair-aimed"]}
REACH_FLAGS = {"blind": [], "swarm": ["--swarm"], "pair": ["--pair-aimed"]}  # modes whose stream reach.py draws


def parse_run(text: str) -> dict:
    parts = text.split(":")
    if len(parts) not in (5, 6) or parts[3] not in FLAGS or not parts[0].replace("-", "").replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(
            f"{text!r}: NAME:DEVICE:BACKEND:MODE:CPUS[:GPU], MODE one of {list(FLAGS)}")
    return dict(zip(("name", "device", "backend", "mode", "cpus", "gpu"), parts + [None] * (6 - len(parts))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--run", action="append", type=parse_run, required=True)
    ap.add_argument("--time", type=int, default=400, help="seconds of cases per campaign")
    ap.add_argument("--drain", type=int, default=120, help="seconds of follow-ups afterwards")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--pairs", action="store_true", help="also each run's pairwise coverage (scripts/reach.py --pairs)")
    ap.add_argument("--no-coverage", action="store_true",
                    help="campaigns without --coverage (no compiler lines; for a check on Python < 3.12)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    py = sys.executable
    procs = {}
    for r in args.run:
        state = os.path.join(ROOT, "runs", f"cmp-{r['name']}-{args.seed}")
        shutil.rmtree(state, ignore_errors=True)
        os.makedirs(os.path.join(state, "corpus"))
        shutil.copy(os.path.join(ROOT, "corpus", "known_issues.json"), os.path.join(state, "corpus"))
        r["state"] = state
        cmd = ["taskset", "-c", r["cpus"], py, "-m", "fuzz", "run", "--device", r["device"], "--backend", r["backend"],
               "--time", f"{args.time}s", "--seed", str(args.seed), "--state", state, "--corpus",
               os.path.join(state, "corpus"), "--no-wait", *([] if args.no_coverage else ["--coverage"]),
               *FLAGS[r["mode"]]]
        if r["gpu"] is not None:
            cmd += ["--gpus", r["gpu"]]
        log = open(os.path.join(args.out, f"{r['name']}.log"), "w")
        procs[r["name"]] = (subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                             env=dict(os.environ, PYTHONUNBUFFERED="1")), log)
    for p, _ in procs.values():
        p.wait()
    drains = [subprocess.Popen(["timeout", "-s", "INT", str(args.drain), "taskset", "-c", r["cpus"], py, "-m", "fuzz",
                                "followup", r["state"]], cwd=ROOT, stdout=procs[r["name"]][1],
                               stderr=subprocess.STDOUT) for r in args.run]
    for p in drains:
        p.wait()
    stats = {r["name"]: json.loads(subprocess.run([py, "-m", "fuzz", "stats", r["state"], "--json"], cwd=ROOT,
                                                  capture_output=True, text=True).stdout or "{}") for r in args.run}
    pairs = _pair_coverage(args, py, stats) if args.pairs else {}
    rows = []
    for r in args.run:
        s = stats[r["name"]]
        bugs = subprocess.run([py, "-m", "fuzz", "bugs", os.path.join(r["state"], "corpus")], cwd=ROOT,
                              capture_output=True, text=True)
        with open(os.path.join(args.out, f"{r['name']}-bugs.txt"), "w") as f:
            f.write(bugs.stdout + bugs.stderr)
        rows.append({**{k: r[k] for k in ("name", "device", "backend", "mode", "cpus")}, "cases": s.get("cases"),
                     "cases_per_second": s.get("cases_per_second"), "compiler_lines": s.get("compiler_lines"),
                     "bugs": s.get("bugs"), "signatures": s.get("signatures"),
                     "known": sum((s.get("findings_known") or {}).values()), "lineage": s.get("lineage"),
                     "followups": s.get("followups"), "outcomes": s.get("outcomes"), "pairs": pairs.get(r["name"])})
    with open(os.path.join(args.out, "modes.json"), "w") as f:
        json.dump({"time": args.time, "drain": args.drain, "seed": args.seed, "at": time.time(), "runs": rows}, f,
                  indent=1)
    print(f"{'run':<14} {'cases':>6} {'/s':>6} {'lines':>7} {'bugs':>5} {'sigs':>5} {'known':>5} {'pairs op':>14} "
          f"{'family':>12}  mutants")
    for x in rows:
        g = x["lineage"] or {}
        lin = (f"{g.get('mutants_reaching_new', 0)}/{g.get('mutants', 0)} new vs fresh "
               f"{g.get('fresh_reaching_new', 0)}/{g.get('fresh', 0)}") if g else "-"
        print(f"{x['name']:<14} {x['cases'] or 0:>6} {x['cases_per_second'] or 0:>6.2f} {x['compiler_lines'] or 0:>7} "
              f"{x['bugs'] or 0:>5} {x['signatures'] or 0:>5} {x['known']:>5} {_share(x, 'op'):>14} "
              f"{_share(x, 'family'):>12}  {lin}")
    return 0


def _pair_coverage(args, py, stats) -> dict:
    """name -> {grain: {seen, feasible, share}}: scripts/reach.py --pairs over the programs each run drew, all
    at once (one feasibility search each: the runs' CPUs are free by now)."""
    procs = {}
    for r in args.run:
        cases = (stats[r["name"]] or {}).get("cases") or 0
        if r["mode"] not in REACH_FLAGS or not cases:
            continue
        out = open(os.path.join(args.out, f"{r['name']}-pairs.json"), "w")
        procs[r["name"]] = (subprocess.Popen(
            ["taskset", "-c", r["cpus"], py, "scripts/reach.py", "--backend", r["backend"], "--device", r["device"],
             "--seed", str(args.seed), "--count", str(cases), "--pairs", "--json", *REACH_FLAGS[r["mode"]]],
            cwd=ROOT, stdout=out, stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=ROOT)), out)
    got = {}
    for name, (p, out) in procs.items():
        p.wait()
        out.close()
        try:
            with open(out.name) as f:
                cov = json.load(f)["pairs"]
        except (OSError, ValueError, KeyError):
            continue
        got[name] = {g: {k: c[k] for k in ("seen", "feasible", "share")} for g, c in cov.items()}
    return got


def _share(row: dict, grain: str) -> str:
    c = (row.get("pairs") or {}).get(grain)
    return f"{c['seen']}/{c['feasible']}" if c else "-"


if __name__ == "__main__":
    sys.exit(main())
