"""The fuzz campaign: generate programs in this process, judge them in
sandboxed workers (or in-process), bucket findings by signature, record new
ones in the corpus, and keep resumable state (fuzz/state.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass, field

from .generate import generate
from .sanitizer import sanitize_entry, wants_sanitizer
from .state import CampaignState
from .verdict import Verdict


@dataclass
class CampaignConfig:
    backend: str = "inductor"
    device: str = "cpu"
    seed: int = 0
    max_cases: int | None = 20
    time_limit: float | None = None  # seconds, over all sessions of this state dir
    max_findings: int | None = None  # stop once this many findings (new or known) are logged
    max_ops: int = 6
    modes: tuple | None = None  # torch.compile modes to sample (None: by device)
    options_menu: str = "auto"  # Inductor flags to sample: auto (by device), cuda, cpu, none
    sanitize: bool = True  # re-run memory-error findings under compute-sanitizer (CUDA, when installed)
    state_dir: str = "runs/default"
    corpus_dir: str = "corpus"
    workers: int = 1  # 0: judge in this process (no sandbox)
    devices: list | None = None  # CUDA indices to pin workers to
    workers_per_gpu: int = 1
    timeout: float = 300.0  # per case, seconds
    known_issues: str | None = None  # default: <corpus_dir>/known_issues.json
    shrink: bool = True  # shrink each new corpus entry in a background process
    shrink_budget: float = 300.0  # seconds per entry

    def identity(self) -> dict:
        """What must match to resume a state dir (not limits or resources)."""
        return {"backend": self.backend, "device": self.device, "seed": self.seed, "max_ops": self.max_ops,
                "modes": list(self.resolved_modes()), "options": self.resolved_options()}

    def on_cuda(self) -> bool:
        return self.device.startswith("cuda")

    def resolved_modes(self) -> tuple:
        from strategies.settings import MODES_CUDA

        if self.modes is not None:
            return tuple(self.modes)
        return MODES_CUDA if self.on_cuda() and self.backend == "inductor" else (None,)

    def resolved_options(self) -> dict:
        from strategies.settings import OPTIONS_CPU, OPTIONS_CUDA

        menu = self.options_menu
        if menu == "auto":
            menu = "cuda" if self.on_cuda() else "none"
        return {"cuda": OPTIONS_CUDA, "cpu": OPTIONS_CPU, "none": {}}[menu]


@dataclass
class CampaignResult:
    summary: dict
    new_entries: list = field(default_factory=list)  # corpus paths created this session
    interrupted: bool = False


class BackgroundShrinker:
    """Shrinks new corpus entries one at a time in a child process
    (`shapefuzz shrink ENTRY`), so the campaign goes on meanwhile."""

    def __init__(self, budget: float, log_path: str):
        self.budget, self.log_path = budget, log_path
        self.queue: deque = deque()
        self.proc = None
        self.finished = 0

    def add(self, entry: str) -> None:
        self.queue.append(entry)
        self.poll()

    def poll(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            self.proc, self.finished = None, self.finished + 1
        if self.proc is None and self.queue:
            entry = self.queue.popleft()
            with open(self.log_path, "a") as log:
                log.write(f"--- shrink {entry}\n")
                log.flush()
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "fuzz", "shrink", entry, "--time-budget", str(self.budget)],
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def pending(self) -> int:
        return len(self.queue) + (self.proc is not None)

    def finish(self, note) -> None:
        """Wait for the running and queued shrinks (each bounded by its budget)."""
        while self.pending:
            note(f"shrinking {self.pending} new entr{'y' if self.pending == 1 else 'ies'} "
                 f"(up to {self.budget:.0f} s each; log {self.log_path})")
            if self.proc is not None:
                try:
                    self.proc.wait(timeout=self.budget * 2 + 120)
                except subprocess.TimeoutExpired:
                    self.kill()
            self.poll()

    def kill(self) -> None:
        self.queue.clear()
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None


def _in_process(cases):
    from .ir import Program
    from .runner import run_case

    for i, p in cases:
        v = run_case(Program.from_dict(p) if isinstance(p, dict) else p)
        yield i, v.to_dict(), {"wall": v.seconds, "restart": None}


def run_campaign(cfg: CampaignConfig, *, progress=None, strategy=None) -> CampaignResult:
    from strategies import programs

    from .corpus import Corpus
    from .known import KnownIssues
    from .progress import Progress
    from .signature import signature

    state = CampaignState.open(cfg.state_dir, cfg.identity())
    corpus = Corpus(cfg.corpus_dir)
    known_path = cfg.known_issues or next(
        (c for c in (os.path.join(cfg.corpus_dir, "known_issues.json"), os.path.join("corpus", "known_issues.json"))
         if os.path.exists(c)), "")
    known = KnownIssues.load(known_path) if os.path.exists(known_path) else None
    strategy = strategy or programs(backend=cfg.backend, device=cfg.device, max_ops=cfg.max_ops,
                                    modes=cfg.resolved_modes(), options_menu=cfg.resolved_options())
    progress = progress or Progress()
    result = CampaignResult(summary={})
    programs_by_case: dict[int, object] = {}

    def cases():
        for i, p in enumerate(generate(strategy, seed_=cfg.seed, count=cfg.max_cases)):
            if cfg.time_limit is not None and state.elapsed > cfg.time_limit:
                return
            if cfg.max_findings is not None and len(state.finding_cases) >= cfg.max_findings:
                return
            if i in state.done:
                continue
            programs_by_case[i] = p
            yield i, p.to_dict()

    pool = None
    if cfg.workers > 0:
        from .workers import WorkerPool

        pool = WorkerPool(workers=cfg.workers, devices=cfg.devices, workers_per_gpu=cfg.workers_per_gpu,
                          timeout=cfg.timeout, workdir=os.path.join(cfg.state_dir, "workers"))
        results = pool.run(cases())
    else:
        results = _in_process(cases())
    last_save = 0.0
    restarts_before = state.restarts.copy()
    shrinker = BackgroundShrinker(cfg.shrink_budget, os.path.join(cfg.state_dir, "shrink.log")) if cfg.shrink else None
    try:
        with progress:
            for i, vd, info in results:
                p = programs_by_case.pop(i)
                v = Verdict.from_dict(vd)
                if v.is_finding:
                    sig = signature(v, p)
                    rule = known.match(sig, v) if known else None
                    entry, is_new = (None, False)
                    if i not in state.finding_cases and rule is None:
                        path, is_new = corpus.record(p, v, sig)
                        entry = str(path)
                        if is_new:
                            result.new_entries.append(entry)
                            if cfg.sanitize and cfg.on_cuda() and wants_sanitizer(v.message):
                                sanitize_entry(entry)
                            if shrinker is not None:
                                shrinker.add(entry)
                    known_as = (rule.url or f"known-issues rule {rule.index}") if rule else None
                    if state.record_finding(i, v.outcome.value, sig.key, sig.text, known_as, entry, is_new) and (
                            is_new or rule):
                        tag = f"known ({known_as})" if rule else "NEW"
                        progress.note(f"[{i}] {tag} {v.summary()[:300]}" + (f"\n      -> {entry}" if is_new else ""))
                state.record_case(i, vd, info.get("wall"), sync=v.is_finding)
                if pool is not None:
                    state.restarts = restarts_before + pool.restarts
                if time.monotonic() - last_save > 2.0:
                    state.save()
                    last_save = time.monotonic()
                progress.update(state.summary())
                if shrinker is not None:
                    shrinker.poll()
        if pool is not None:
            pool.close()
        if shrinker is not None:
            shrinker.finish(progress.note)
    except KeyboardInterrupt:
        result.interrupted = True
        if shrinker is not None:
            shrinker.kill()
    finally:
        if pool is not None:
            pool.close()
        state.save()
    result.summary = state.summary()
    return result


def config_dict(cfg: CampaignConfig) -> dict:
    return asdict(cfg)
