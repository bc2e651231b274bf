"""Shrink figures: generate findings with the planted-bug backends, shrink
each with its signature pinned, print a table and the medians.

    PYTHONPATH=. .venv/bin/python benchmarks/shrink_figures.py [--per-backend 3] [--min-ops 10] [--relaxed]

Findings are the first programs (of at least --min-ops ops, from
strategies.programs with --max-ops) that a planted backend gets wrong, at most
one per distinct program. Every shrink runs in this process (planted backends
never crash) within --time-budget seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzz.campaign.generate import generate  # noqa: E402
from fuzz.judge.runner import run_case  # noqa: E402
from fuzz.findings.shrink.entry import shrink  # noqa: E402
from fuzz.findings.signature import signature  # noqa: E402

PLANTED = ("wrong_on_odd_reflect", "corrupt_large", "storage_error_on_pad", "mutate_input")


def findings(backend: str, n: int, seed: int, min_ops: int, max_ops: int, max_cases: int):
    from strategies import programs

    got = []
    for p in generate(programs(backend=backend, max_ops=max_ops, min_ops=min_ops), seed_=seed, count=max_cases):
        v = run_case(p, rerun=False)
        if v.is_finding:
            got.append((p, v))
            if len(got) >= n:
                break
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", nargs="+", default=list(PLANTED), help="planted backend names")
    ap.add_argument("--per-backend", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-ops", type=int, default=10)
    ap.add_argument("--max-ops", type=int, default=12)
    ap.add_argument("--max-cases", type=int, default=300, help="programs tried per backend to find findings")
    ap.add_argument("--time-budget", type=float, default=300.0)
    ap.add_argument("--reruns", type=int, default=3)
    ap.add_argument("--relaxed", action="store_true", help="also shrink with relax_families=True")
    ap.add_argument("--json", help="write every result's figures to this file")
    args = ap.parse_args(argv)

    modes = [False, True] if args.relaxed else [False]
    rows = {m: [] for m in modes}
    cols = ("pin", "backend", "outcome", "ops", "inputs", "max rank", "calls", "evals", "seconds", "flaky")
    line = "{:7s} {:21s} {:24s} {:>7s} {:>7s} {:>8s} {:>6s} {:>6s} {:>8s} {:>5s}"
    print("pin: key = the exact signature key; relaxed = value outcomes may keep a subset of the op families")
    print(line.format(*cols))
    results = []
    t0 = time.monotonic()
    for name in args.backends:
        backend = name if ":" in name else f"fuzz.planted:{name}"
        for p, v in findings(backend, args.per_backend, args.seed, args.min_ops, args.max_ops, args.max_cases):
            sig = signature(v, p)
            for mode in modes:
                r = shrink(p, sig.key, time_budget=args.time_budget, reruns=args.reruns, relax_families=mode)
                rows[mode].append(r)
                results.append({"backend": name, "relaxed": mode, **r.stats(), "shrunk": r.program.to_dict()})
                print(line.format(
                    "relaxed" if mode else "key", name[:21], v.outcome.value, f"{r.ops_before}->{r.ops_after}",
                    f"{r.inputs_before}->{r.inputs_after}", f"{r.max_rank_before}->{r.max_rank_after}",
                    f"{r.original.calls}->{r.program.calls}", str(r.evaluations), f"{r.seconds:.1f}",
                    "yes" if r.flaky else ""), flush=True)
    for mode in modes:
        ok = [r for r in rows[mode] if r.reproduced]
        if not ok:
            continue
        med = lambda f: statistics.median(f(r) for r in ok)  # noqa: E731
        red = [1 - r.ops_after / r.ops_before for r in ok if r.ops_before]
        print(f"\nmedians over {len(ok)} findings ({'relaxed families' if mode else 'exact key'}): "
              f"ops {med(lambda r: r.ops_before):g} -> {med(lambda r: r.ops_after):g}, "
              f"inputs -> {med(lambda r: r.inputs_after):g}, max rank -> {med(lambda r: r.max_rank_after):g}, "
              f"calls -> {med(lambda r: r.program.calls):g}, op-count reduction {100 * statistics.median(red):.0f}%, "
              f"{med(lambda r: r.seconds):.1f} s, {med(lambda r: r.evaluations):g} evaluations")
        print(f"  <= 3 ops: {sum(r.ops_after <= 3 for r in ok)}/{len(ok)}; one input of rank <= 2: "
              f"{sum(r.inputs_after == 1 and r.max_rank_after <= 2 for r in ok)}/{len(ok)}; "
              f">= 90% fewer ops: {sum(x >= 0.9 for x in red)}/{len(ok)}; "
              f"max seconds {max(r.seconds for r in ok):.1f}; flaky {sum(r.flaky for r in ok)}; "
              f"timed out {sum(r.timed_out for r in ok)}")
    print(f"\ntotal {time.monotonic() - t0:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
