"""The floor of a campaign: the same programs as a state dir's first cases
(regenerated as case_costs.py does), each only compiled and called once at its
first size (bench_workers.py's bare pass), in as many processes as the
campaign had workers. Prints the floor's seconds per program beside the
campaign's seconds per case for the same programs: what the oracle (eager and
compiled over the whole schedule, strides, recompiles, backward) costs on top.

    PYTHONPATH=. python3 benchmarks/floor_rate.py runs/gpu/state --cases 320 --procs 16
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _init() -> None:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="floor-inductor-")
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="floor-triton-")
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # as the campaign's workers
    os.environ["OMP_NUM_THREADS"] = "1"
    from fuzz.judge.runner import prepare_process

    prepare_process()


def _time_one(item):
    from bench_workers import _bare
    from fuzz.program.ir import Program

    i, d = item
    t = time.perf_counter()
    _bare(Program.from_dict(d))
    return i, os.getpid(), time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state")
    ap.add_argument("--cases", type=int, default=320)
    ap.add_argument("--procs", type=int, default=16)
    args = ap.parse_args()

    from case_costs import campaign_config, load_cases
    from fuzz.campaign.generate import generate

    cases = load_cases(args.state)
    cfg = campaign_config(args.state)
    n = min(args.cases, len(cases))
    progs = list(generate(cfg.kind().strategy(cfg), seed_=cfg.seed, count=n))
    items = [(i, p.to_dict()) for i, p in enumerate(progs)]
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.procs, initializer=_init) as pool:
        list(pool.map(_time_one, items[:args.procs], chunksize=1))  # each process's first compile: imports
        start = time.perf_counter()
        timed = list(pool.imap_unordered(_time_one, items, chunksize=1))
        wall = time.perf_counter() - start
    floor = sum(s for _, _, s in timed) / len(timed)
    judged = [cases[i]["seconds"] for i, _, _ in timed if i in cases]
    case = sum(judged) / len(judged)
    print(json.dumps({"programs": len(timed), "procs": args.procs, "floor_seconds_per_program": round(floor, 3),
                      "floor_programs_per_second": round(len(timed) / wall, 3),
                      "campaign_seconds_per_case": round(case, 3), "case_over_floor": round(case / floor, 2)}))


if __name__ == "__main__":
    main()
