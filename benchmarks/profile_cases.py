"""Where a case's time goes inside the judge: profiles run_case (cProfile)
over the programs `shapefuzz run` would generate, in P processes judging
interleaved slices at once (a loaded machine, as in a campaign), merges the
profiles and prints the cumulative seconds of the judge's phases (Dynamo,
AOTAutograd, Inductor codegen, Triton compile, autotuning benchmarks,
cudagraphs, eager, comparison) and the top functions.

    PYTHONPATH=. python3 benchmarks/profile_cases.py --device cuda --seed 11 --cases 240 --procs 12
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import pstats
import tempfile
import time

# phase -> substrings of "file:function" whose cumulative time is the phase's
# (nested phases overlap: Triton compile is inside Inductor's codegen)
PHASES = {
    "dynamo (convert_frame)": ("convert_frame.py:_compile",),
    "aot autograd": ("aot_autograd.py:create_aot_dispatcher_function", "aot_autograd.py:aot_function"),
    "inductor compile_fx_inner": ("compile_fx.py:compile_fx_inner", "compile_fx.py:fx_codegen_and_compile"),
    "inductor codegen (compile_to_module)": ("graph.py:compile_to_module",),
    "async_compile.triton": ("async_compile.py:triton",),
    "triton compile": ("triton/compiler/compiler.py:compile",),
    "triton precompile": ("triton_heuristics.py:precompile",),
    "autotune benchmark": ("triton_heuristics.py:benchmark_all_configs", "select_algorithm.py:benchmark",
                           "coordinate_descent_tuner.py:autotune"),
    "cudagraph trees": ("cudagraph_trees.py:record_function", "cudagraph_trees.py:run"),
    "dynamo reset": ("eval_frame.py:reset", "__init__.py:reset"),
    "compare": ("compare.py:compare_outputs",),
    "cuda synchronize": ("cuda/__init__.py:synchronize",),
}


def _work(args) -> str:
    from fuzz.campaign.driver import CampaignConfig
    from fuzz.campaign.generate import generate
    from fuzz.judge.runner import prepare_process, run_case

    import cProfile

    index, procs, cfg_kw, count, out_dir = args
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"prof{index}-")
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    cfg = CampaignConfig(**cfg_kw)
    progs = [p for i, p in enumerate(generate(cfg.kind().strategy(cfg), seed_=cfg.seed, count=count))
             if i % procs == index]
    prepare_process()
    run_case(progs[0])  # lazy imports, paid once per process
    prof = cProfile.Profile()
    start = time.perf_counter()
    for p in progs[1:]:
        prof.enable()
        try:
            run_case(p)
        except Exception:  # noqa: BLE001 - an invalid program: its time still counts
            pass
        prof.disable()
    path = os.path.join(out_dir, f"p{index}.prof")
    prof.dump_stats(path)
    return f"{path} {len(progs) - 1} {time.perf_counter() - start:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--out", default=None, help="dir for the merged profile (merged.prof)")
    args = ap.parse_args()

    out_dir = args.out or tempfile.mkdtemp(prefix="shapefuzz-prof-")
    os.makedirs(out_dir, exist_ok=True)
    cfg_kw = dict(backend=args.backend, device=args.device, seed=args.seed)
    with mp.get_context("spawn").Pool(args.procs) as pool:
        done = pool.map(_work, [(i, args.procs, cfg_kw, args.cases, out_dir) for i in range(args.procs)])
    paths = [d.split()[0] for d in done]
    cases = sum(int(d.split()[1]) for d in done)
    wall = max(float(d.split()[2]) for d in done)
    stats = pstats.Stats(*paths)
    stats.dump_stats(os.path.join(out_dir, "merged.prof"))
    total = stats.total_tt
    print(f"{cases} cases in {args.procs} processes, {wall:.0f} s wall, {total:.0f} profiled s "
          f"({total / max(cases, 1):.2f} s a case); profile: {out_dir}/merged.prof")
    rows = stats.stats  # (file, line, func) -> (cc, nc, tt, ct, callers)
    print("\nphase                          cum s   share  (nested phases overlap)")
    for phase, keys in PHASES.items():
        # a function's cumulative time once, even when several names match (recursion is counted once by cProfile)
        cum = sum(ct for (f, _, fn), (_, _, _, ct, _) in rows.items()
                  if any(k.split(":")[0] in f and fn == k.split(":")[1] for k in keys))
        print(f"  {phase:28} {cum:7.0f} {cum / total:7.1%}")
    print()
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
