"""Throughput of the worker sandbox against plain in-process evaluation.

Judges one fixed, seeded set of generated programs four ways: a bare loop of
torch.compile + one call per program (the floor), run_case in a loop in this
process (no sandbox), through a WorkerPool of 1 worker, and of K workers;
prints cases/s for each and the overhead ratios. Worker start-up
(importing torch) and each process's first compile (lazy imports) are
excluded: a campaign pays them once per worker. The target
is a pool of 1 within 10% of in-process throughput.

Every pass starts with cold on-disk compile caches (fresh Inductor and Triton
cache dirs, FX graph cache off), so no pass is served by another's kernels;
the bare floor runs last, so it alone may reuse in-memory code. Each line is
printed as soon as it is measured: a bench cut short still reports.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_workers.py --cases 40 --workers 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="aot_eager")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda: the pool pins its workers to GPU 0")
    ap.add_argument("--max-ops", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2, help="K, for the pool of K workers")
    ap.add_argument("--repeat", type=int, default=2, help="passes of each kind; the best is reported")
    args = ap.parse_args()

    os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"  # before torch is imported; workers inherit it
    os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    from fuzz.campaign.generate import generate
    from fuzz.judge.runner import prepare_process, run_case
    from fuzz.campaign.workers import WorkerPool
    from strategies import programs

    progs = list(generate(programs(backend=args.backend, device=args.device, max_ops=args.max_ops),
                          seed_=args.seed, count=args.cases))
    cases = [(i, p.to_dict()) for i, p in enumerate(progs)]
    print(f"{len(progs)} programs, backend {args.backend}, device {args.device}, seed {args.seed}, "
          f"{os.cpu_count()} CPUs", flush=True)

    prepare_process()
    run_case(progs[0])  # lazy imports of the first compile, paid by every process once
    best: dict[str, float] = {}
    notes: dict[str, str] = {}
    for _ in range(args.repeat):  # interleaved, best of each: the machine may be shared
        _fresh_caches()
        start = time.perf_counter()
        verdicts = [run_case(p) for p in progs]
        inproc = [v.outcome.value for v in verdicts]
        seconds = time.perf_counter() - start
        share = sum(v.compile_seconds for v in verdicts) / seconds
        if _keep(best, "in-process", len(progs) / seconds):
            notes["in-process"] = f"first-call (compile) share {100 * share:.0f}%"
        _report("in-process", best, notes)
        for k in sorted({1, args.workers}):
            with WorkerPool(workers=k, devices=[0] if args.device == "cuda" else None) as pool:
                t = time.perf_counter()
                pool.wait_ready()
                startup = time.perf_counter() - t
                list(pool.run([(-1 - i, cases[0][1]) for i in range(k)], prefetch=1))  # same warm-up per worker
                start = time.perf_counter()
                results = list(pool.run(cases))
                seconds = time.perf_counter() - start
            gap = [info["elapsed"] - info["wall"] for _, _, info in results if info["wall"] is not None]
            # all the pool adds, measured directly (the ratio of throughputs also carries run-to-run noise)
            outside = 1 - sum(info["wall"] or 0.0 for _, _, info in results) / seconds if k == 1 else None
            compile_s = sum(v.get("compile_seconds", 0.0) or 0.0 for _, v, _ in results)
            busy = sum(info["wall"] or 0.0 for _, _, info in results)
            outcomes = [v["outcome"] for _, v, _ in sorted(results, key=lambda r: r[0])]
            name = f"pool of {k}"
            if _keep(best, name, len(results) / seconds):
                notes[name] = (f"start-up {startup:.1f} s, median dispatch+IPC {1e3 * statistics.median(gap):.2f} ms/case,"
                               + (f" time outside run_case {100 * outside:.2f}%," if outside is not None else "")
                               + (f" compile share {100 * compile_s / busy:.0f}%," if busy else "")
                               + f" outcomes {'match' if outcomes == inproc else 'DIFFER from'} in-process")
            _report(name, best, notes)
        _fresh_caches()
        start = time.perf_counter()
        for p in progs:
            _bare(p)
        _keep(best, "bare compile+1 call", len(progs) / (time.perf_counter() - start))
        _report("bare compile+1 call", best, notes)
    print(f"in-process / bare floor: {best['in-process'] / best['bare compile+1 call']:.3f} "
          "(the oracle's own cost: eager + float64 runs and the whole size schedule)")
    ratio = best["pool of 1"] / best["in-process"]
    print(f"pool-1 / in-process throughput: {ratio:.3f} (sandbox overhead {100 * (1 - ratio):.1f}%)")
    print(f"pool-1 / bare floor: {best['pool of 1'] / best['bare compile+1 call']:.3f}")
    if args.workers > 1:
        print(f"pool-{args.workers} / in-process throughput: {best[f'pool of {args.workers}'] / best['in-process']:.2f}x")


def _report(name: str, best: dict, notes: dict) -> None:
    print(f"{name:>20}: {best[name]:6.2f} cases/s" + (f"  ({notes[name]})" if name in notes else ""), flush=True)


def _fresh_caches() -> None:
    """Point this process's Inductor and Triton caches at new, empty dirs."""
    import tempfile

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-inductor-")
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-triton-")


def _bare(p) -> None:
    """The floor: torch.compile and one call at the first size, nothing else."""
    import torch

    from fuzz.judge.backends import compile_program
    from fuzz.program.interp import load

    torch._dynamo.reset()
    prog = load(p)
    inputs = prog.make_inputs(0)
    prog.mark_inputs(*inputs)
    try:
        compile_program(prog.program, p.settings)(*inputs)
        if p.settings.device.startswith("cuda"):
            torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - the floor only times, it does not judge
        pass


def _keep(best: dict, name: str, rate: float) -> bool:
    if rate > best.get(name, 0.0):
        best[name] = rate
        return True
    return False


if __name__ == "__main__":
    main()
