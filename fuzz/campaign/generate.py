"""Deterministic program generation from the Hypothesis strategies, outside a
test: a seed gives the same stream of programs (for one Hypothesis version).
Generation is cheap (~20 ms a program) next to evaluation."""

from __future__ import annotations

import hashlib
from typing import Iterator

from hypothesis import HealthCheck, Phase, given, seed, settings

from fuzz.program.ir import Program

BATCH = 100


def generate(strategy, *, seed_: int = 0, count: int | None = None, skip: int = 0) -> Iterator[Program]:
    """Yield distinct programs from `strategy`: batch b uses Hypothesis seed
    (seed_, b). `skip` drops the first programs (to resume a campaign)."""
    seen: set[str] = set()
    produced = 0
    batch = 0
    while count is None or produced < count:
        for p in _batch(strategy, seed_, batch):
            key = hashlib.sha1(p.to_json(sort_keys=True).encode()).hexdigest()
            if key in seen:
                continue
            seen.add(key)
            produced += 1
            if produced > skip:
                yield p
            if count is not None and produced >= count:
                return
        batch += 1


def _batch(strategy, seed_: int, batch: int) -> list[Program]:
    out: list[Program] = []

    @seed(seed_ * 1_000_003 + batch)
    @settings(max_examples=BATCH, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(p):
        out.append(p)

    collect()
    return out
