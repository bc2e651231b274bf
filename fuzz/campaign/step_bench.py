"""A short in-process run over generated step programs, for measuring:

    PJRT_DEVICE=CPU .venv-xla/bin/python -m fuzz.campaign.step_bench --count 300 [--seed 0] [--fault NAME]
    ... -m fuzz.campaign.step_bench --count 100000 --time 1800     # a 30-minute campaign

Prints cases/s, outcomes, the share of cases that hit the compilation cache,
eager acceptance, and each finding with its known-issue label.
"""

from __future__ import annotations

import argparse
import collections
import time


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m fuzz.campaign.step_bench")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fault", default=None)
    ap.add_argument("--time", type=float, default=None, help="stop after this many seconds")
    args = ap.parse_args(argv)

    import torch_xla  # noqa: F401 - start-up is not a case's time

    from fuzz.campaign.generate import generate
    from strategies.steps import step_programs

    from fuzz.judge.steps import PoisonedProcess, known_issue, run_step_program

    outcomes, numbers, hit, findings = collections.Counter(), collections.Counter(), 0, []
    t0 = time.perf_counter()
    n = 0
    for i, p in enumerate(generate(step_programs(), seed_=args.seed, count=args.count)):
        if args.time is not None and time.perf_counter() - t0 > args.time:
            break
        n += 1
        if n % 500 == 0:
            print(f"... {n} cases, {n / (time.perf_counter() - t0):.1f}/s, findings {len(findings)}", flush=True)
        try:
            v = run_step_program(p, fault=args.fault)
        except PoisonedProcess as e:  # torch_xla is unusable in this process from here on
            print(f"  case {i}: stopped, the process is poisoned: {e}", flush=True)
            break
        outcomes[v.outcome.value] += 1
        for k in ("compiles", "cached_compiles", "executes", "cpu_fallbacks"):
            numbers[k] += v.numbers.get(k, 0)
        hit += v.numbers.get("cached_compiles", 0) > 0
        if v.is_finding:
            findings.append((i, v))
            print(f"  case {i}: {v.summary()[:160]}  [{known_issue(v) or 'unknown'}]", flush=True)
    dt = time.perf_counter() - t0
    eager_ok = n - outcomes["invalid"] - outcomes["eager-only-error"]
    print(f"{n} cases in {dt:.1f}s: {n / dt:.1f} cases/s")
    print(f"outcomes: {dict(outcomes)}")
    print(f"cases with a cache hit: {hit}/{n} ({hit / n:.0%}); totals {dict(numbers)}")
    print(f"eager accepted: {eager_ok}/{n} ({eager_ok / n:.1%})")
    for i, v in findings:
        print(f"  case {i}: {v.summary()[:160]}  [{known_issue(v) or 'unknown'}]")


if __name__ == "__main__":
    main()
