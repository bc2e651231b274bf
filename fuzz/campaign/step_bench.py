"""A short in-process run over generated torch_xla step programs, for
measuring (`shapefuzz bench`, fuzz/cli/bench.py):

    PJRT_DEVICE=CPU .venv-xla/bin/python -m fuzz bench --count 300 [--seed 0] [--fault NAME]
    ... -m fuzz bench --count 100000 --time 30m     # a 30-minute campaign

`run_bench` judges the programs one after another in this process (no
sandbox, no corpus) and returns cases/s, outcomes, the share of cases that
hit the compilation cache, eager acceptance and each finding with its
known-issue label; `BenchResult.lines()` is that as text.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Callable

PROGRESS_EVERY = 500  # cases between progress lines


@dataclass
class BenchResult:
    cases: int = 0
    seconds: float = 0.0
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    numbers: collections.Counter = field(default_factory=collections.Counter)  # torch_xla metrics, summed
    cache_hits: int = 0  # cases with at least one cached compile
    findings: list = field(default_factory=list)  # (case index, Verdict)
    poisoned: str = ""  # why the run stopped early: torch_xla unusable in this process

    @property
    def eager_accepted(self) -> int:
        return self.cases - self.outcomes["invalid"] - self.outcomes["eager-only-error"]

    def lines(self) -> list[str]:
        n = self.cases
        per = max(n, 1)
        out = [f"{n} cases in {self.seconds:.1f}s: {n / self.seconds if self.seconds else 0.0:.1f} cases/s",
               f"outcomes: {dict(self.outcomes)}",
               f"cases with a cache hit: {self.cache_hits}/{n} ({self.cache_hits / per:.0%}); "
               f"totals {dict(self.numbers)}",
               f"eager accepted: {self.eager_accepted}/{n} ({self.eager_accepted / per:.1%})"]
        return out + [finding_line(i, v) for i, v in self.findings]


def finding_line(i: int, v) -> str:
    from fuzz.judge.steps import known_issue

    return f"  case {i}: {v.summary()[:160]}  [{known_issue(v) or 'unknown'}]"


def run_bench(count: int = 200, seed: int = 0, fault: str | None = None, time_limit: float | None = None,
              log: Callable[[str], None] | None = None) -> BenchResult:
    """Judge `count` generated step programs (seed `seed`) in this process,
    `fault` planted, stopping after `time_limit` seconds when given; `log`
    gets a progress line every PROGRESS_EVERY cases and a line per finding.
    Needs torch_xla (ImportError without it)."""
    import torch_xla  # noqa: F401 - start-up is not a case's time

    from fuzz.campaign.generate import generate
    from fuzz.judge.steps import PoisonedProcess, run_step_program
    from strategies.steps import step_programs

    log = log or (lambda m: None)
    res = BenchResult()
    t0 = time.perf_counter()
    for i, p in enumerate(generate(step_programs(), seed_=seed, count=count)):
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            break
        res.cases += 1
        n = res.cases
        if n % PROGRESS_EVERY == 0:
            log(f"... {n} cases, {n / (time.perf_counter() - t0):.1f}/s, findings {len(res.findings)}")
        try:
            v = run_step_program(p, fault=fault)
        except PoisonedProcess as e:  # torch_xla is unusable in this process from here on
            res.poisoned = str(e)
            log(f"  case {i}: stopped, the process is poisoned: {e}")
            break
        res.outcomes[v.outcome.value] += 1
        for k in ("compiles", "cached_compiles", "executes", "cpu_fallbacks"):
            res.numbers[k] += v.numbers.get(k, 0)
        res.cache_hits += v.numbers.get("cached_compiles", 0) > 0
        if v.is_finding:
            res.findings.append((i, v))
            log(finding_line(i, v))
    res.seconds = time.perf_counter() - t0
    return res
