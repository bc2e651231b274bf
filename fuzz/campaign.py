"""The fuzz loop: generate programs, judge each, count outcomes, keep findings."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from .generate import generate
from .ir import RunSettings
from .runner import run_case
from .verdict import Outcome

PROGRESS_EVERY = 30.0  # seconds between progress lines


@dataclass
class CampaignConfig:
    backend: str = "inductor"
    device: str = "cpu"
    seed: int = 0
    max_cases: int | None = 20
    time_limit: float | None = None  # seconds
    max_ops: int = 6
    out_dir: str | None = None  # findings are written here as JSON


@dataclass
class CampaignResult:
    cases: int = 0
    outcomes: Counter = field(default_factory=Counter)
    findings: list = field(default_factory=list)  # (program, verdict)
    seconds: float = 0.0
    case_seconds: list = field(default_factory=list)
    compile_seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"cases": self.cases, "outcomes": dict(self.outcomes), "findings": len(self.findings),
                "seconds": round(self.seconds, 2),
                "cases_per_second": round(self.cases / self.seconds, 4) if self.seconds else 0.0,
                "median_case_seconds": round(statistics.median(self.case_seconds), 3) if self.case_seconds else None,
                "compile_share": round(self.compile_seconds / sum(self.case_seconds), 3) if self.case_seconds else None}


def run_campaign(cfg: CampaignConfig, strategy=None, log=print, stop_after_findings: int | None = None) -> CampaignResult:
    from strategies import programs

    strategy = strategy or programs(backend=cfg.backend, device=cfg.device, max_ops=cfg.max_ops)
    res = CampaignResult()
    start = last_note = time.perf_counter()
    for i, p in enumerate(generate(strategy, seed_=cfg.seed, count=cfg.max_cases)):
        if cfg.time_limit is not None and time.perf_counter() - start > cfg.time_limit:
            break
        p.settings = RunSettings(**{**p.settings.__dict__, "backend": cfg.backend, "device": cfg.device})
        v = run_case(p)
        res.cases += 1
        res.outcomes[v.outcome.value] += 1
        res.case_seconds.append(v.seconds)
        res.compile_seconds += v.compile_seconds
        if v.is_finding:
            res.findings.append((p, v))
            log(f"[{i}] FINDING {v.summary()}")
            if cfg.out_dir:
                _save(cfg.out_dir, i, p, v)
            if stop_after_findings and len(res.findings) >= stop_after_findings:
                break
        elif v.outcome is not Outcome.OK:
            log(f"[{i}] {v.summary()[:160]}")
        if time.perf_counter() - last_note > PROGRESS_EVERY:
            last_note = time.perf_counter()
            log(f"... {res.cases} cases, {len(res.findings)} findings, {res.cases / (last_note - start):.2f} cases/s")
    res.seconds = time.perf_counter() - start
    return res


def _save(out_dir: str, i: int, p, v) -> None:
    from .codegen import repro_source

    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"case{i:05d}")
    for suffix, text in ((".json", json.dumps({"program": p.to_dict(), "verdict": v.to_dict()}, indent=1)),
                         (".repro.py", repro_source(p, title=v.summary()))):
        tmp = base + suffix + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, base + suffix)
