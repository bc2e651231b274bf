"""Throughput of `shapefuzz run --ray` on a local Ray cluster of this machine
against the one-machine pool, same seed, backend and cases: the figures of
docs/cluster.md.

    .venv/bin/python benchmarks/ray_bench.py --nodes 3 --cases 100            # aot_eager, seed 1

Starts a head and NODES-1 worker nodes with `ray start --num-cpus 1` each
(127.0.0.1, a temp dir of their own; tests/ray/raycluster.py), runs the
campaign with --ray, stops the nodes, then runs it without Ray (the default
pool: one worker per usable CPU). Prints each run's cases/s and, for the Ray
run, each node's; --json for machines. Needs the ray extra."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "ray"))

from raycluster import LocalCluster, env  # noqa: E402


def campaign(out: str, args, ray: str | None, workers: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "fuzz", "run", "--backend", args.backend, "--seed", str(args.seed),
           "--max-cases", str(args.cases), "--state", os.path.join(out, "st"), "--corpus", os.path.join(out, "c"),
           "--no-shrink", "--no-triage", "--json"] + (["--ray", ray] if ray else [])
    cmd += ["--workers", workers] if workers else []
    os.makedirs(os.path.join(out, "c"))
    start = time.monotonic()
    r = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=3600, cwd=ROOT)
    wall = time.monotonic() - start
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    text = r.stdout if r.stdout.startswith("{") else r.stdout[r.stdout.index("\n{") + 1:]  # after the notes
    s = json.loads(text)
    return {"command": " ".join(cmd[1:]), "wall_s": round(wall, 1), "cases": s["cases"],
            "elapsed_s": s["elapsed"], "cases_per_second": s["cases_per_second"], "outcomes": s["outcomes"],
            "nodes": s.get("nodes", {})}


def _outcomes(out: str) -> dict:
    """case index -> outcome, from the campaign's log."""
    with open(os.path.join(out, "st", "cases.jsonl")) as f:
        return {r["i"]: r["outcome"] for r in map(json.loads, f)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backend", default="aot_eager")
    ap.add_argument("--pool-workers", nargs="+", default=["default"],
                    help="the runs without Ray: default (one worker per usable CPU) and/or worker counts")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the runs' state and corpus dirs (printed)")
    args = ap.parse_args()
    out = tempfile.mkdtemp(prefix="shapefuzz-raybench-")
    cluster = LocalCluster()
    try:
        cluster.head(cpus=1)
        for k in range(1, args.nodes):
            cluster.worker(f"w{k}", cpus=1)
        cluster.wait_nodes(args.nodes)
        with_ray = campaign(os.path.join(out, "ray"), args, cluster.address)
    finally:
        cluster.stop()
    pools = {}
    for w in args.pool_workers:
        pools[w] = campaign(os.path.join(out, f"pool-{w}"), args, None, None if w == "default" else w)
        pools[w]["same_outcomes"] = _outcomes(os.path.join(out, "ray")) == _outcomes(os.path.join(out, f"pool-{w}"))
    res = {"ray": with_ray, "pools": pools, "cpus": os.cpu_count()}
    if args.keep:
        print(f"runs kept under {out}", file=sys.stderr)
    else:
        shutil.rmtree(out, ignore_errors=True)
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print(f"{args.backend}, seed {args.seed}, {args.cases} cases, {os.cpu_count()} CPUs")
    print(f"--ray, {args.nodes} nodes of 1 Ray CPU: {with_ray['cases_per_second']:.3f} cases/s "
          f"({with_ray['cases']} cases in {with_ray['elapsed_s']} s)")
    for name, n in sorted(with_ray["nodes"].items()):
        print(f"    node {name}: {n['cases']} cases, {n['cases_per_second']:.3f} cases/s, {n['workers']} worker(s)")
    print(f"    summed over the nodes: {sum(n['cases_per_second'] for n in with_ray['nodes'].values()):.3f} cases/s")
    for w, p in pools.items():
        print(f"without Ray, --workers {w}: {p['cases_per_second']:.3f} cases/s ({p['cases']} cases in "
              f"{p['elapsed_s']} s); the same outcome for every case as with Ray: {p['same_outcomes']}")


if __name__ == "__main__":
    main()
