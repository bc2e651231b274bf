"""The fuzz campaign: generate programs in this process, judge them in
sandboxed workers (or in-process), bucket findings by signature, record new
ones in the corpus, and keep resumable state (fuzz/campaign/state.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass, field

from fuzz.campaign.generate import generate
from fuzz.findings.sanitizer import wants_sanitizer
from fuzz.campaign.state import CampaignState, StateError
from fuzz.judge.verdict import Verdict


SANITIZER_TIMEOUT = 600.0  # seconds for one compute-sanitizer re-run of a repro
TRIAGE_TIMEOUT = 1200.0  # seconds for one entry's whole ablation (about 15 variants, a compile each)


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
    triage: bool = True  # ablate each new entry (after its shrink) in a background process

    def identity(self) -> dict:
        """What must match to resume a state dir (not limits or resources)."""
        return {"backend": self.backend, "device": self.device, "seed": self.seed, "max_ops": self.max_ops,
                "modes": list(self.resolved_modes()), "options": self.resolved_options()}

    def kind(self):
        """The program kind the backend judges (fuzz/kinds)."""
        from fuzz.judge.backends import backend
        from fuzz.kinds import named

        return named(backend(self.backend).kind)

    def on_cuda(self) -> bool:
        from fuzz.devices import is_cuda

        return is_cuda(self.device) and self.kind().name == "compiled"

    def resolved_modes(self) -> tuple:
        from fuzz.judge.backends import backend
        from strategies.settings import MODES_CUDA

        if self.modes is not None:
            return tuple(self.modes)
        return MODES_CUDA if self.on_cuda() and backend(self.backend).inductor else (None,)

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


class BackgroundJobs:
    """Follow-up work on new corpus entries (`shapefuzz sanitize`, `shapefuzz
    shrink`), one child process at a time in arrival order, so the campaign
    loop never waits on it. Each job is bounded by its own timeout."""

    def __init__(self, log_path: str):
        self.log_path = log_path
        self.queue: deque = deque()  # (argv, timeout)
        self.proc = None
        self.deadline = 0.0
        self.finished = 0

    def add(self, args: list, timeout: float) -> None:
        self.queue.append(([sys.executable, "-m", "fuzz", *args], timeout))
        self.poll()

    def poll(self) -> None:
        if self.proc is not None and self.proc.poll() is None and time.monotonic() > self.deadline:
            self._kill_current()
        if self.proc is not None and self.proc.poll() is not None:
            self.proc, self.finished = None, self.finished + 1
        if self.proc is None and self.queue:
            argv, timeout = self.queue.popleft()
            with open(self.log_path, "a") as log:
                log.write(f"--- {' '.join(argv[3:])}\n")
                log.flush()
                self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            self.deadline = time.monotonic() + timeout

    @property
    def pending(self) -> int:
        return len(self.queue) + (self.proc is not None)

    def finish(self, note) -> None:
        """Wait for the running and queued jobs (each bounded by its timeout)."""
        while self.pending:
            note(f"finishing {self.pending} follow-up job{'s' * (self.pending > 1)} on new entries "
                 f"(shrink, sanitizer; log {self.log_path})")
            if self.proc is not None:
                try:
                    self.proc.wait(timeout=max(self.deadline - time.monotonic(), 0) + 5)
                except subprocess.TimeoutExpired:
                    self._kill_current()
            self.poll()

    def _kill_current(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def kill(self) -> None:
        self.queue.clear()
        self._kill_current()
        self.proc = None


def run_campaign(cfg: CampaignConfig, *, progress=None, strategy=None) -> CampaignResult:

    from fuzz.findings.corpus import Corpus
    from fuzz.findings.known import KnownIssues
    from fuzz.campaign.progress import Progress
    from fuzz.findings.signature import signature

    # everything read and checked before the state dir is opened (and written)
    if os.path.exists(cfg.corpus_dir) and not os.path.isdir(cfg.corpus_dir):
        raise StateError(f"corpus {cfg.corpus_dir} is not a directory")
    corpus = Corpus(cfg.corpus_dir)
    known_path = cfg.known_issues or next(
        (c for c in (os.path.join(cfg.corpus_dir, "known_issues.json"), os.path.join("corpus", "known_issues.json"))
         if os.path.exists(c)), "")
    if cfg.known_issues and not os.path.exists(cfg.known_issues):
        raise StateError(f"no known-issues file {cfg.known_issues}")
    known = KnownIssues.load(known_path) if os.path.exists(known_path) else None
    kind = cfg.kind()
    state = CampaignState.open(cfg.state_dir, cfg.identity())
    if strategy is None:
        strategy = kind.strategy(cfg)
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
        from fuzz.campaign.workers import WorkerPool

        pool = WorkerPool(workers=cfg.workers, devices=cfg.devices, workers_per_gpu=cfg.workers_per_gpu,
                          timeout=cfg.timeout, workdir=os.path.join(cfg.state_dir, "workers"), kind=kind,
                          recycle_after=kind.recycle_after, env=kind.worker_env())
        results = pool.run(cases())
    else:
        results = kind.in_process(cases())
    last_save = 0.0
    restarts_before = state.restarts.copy()
    jobs = BackgroundJobs(os.path.join(cfg.state_dir, "followup.log"))
    try:
        with progress:
            for i, vd, info in results:
                p = programs_by_case.pop(i)
                if info.get("program"):  # the standalone form of a history-dependent finding
                    from fuzz.program.loading import load_program

                    p = load_program(info["program"])
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
                            # sanitizer first: it runs the entry's repro as found, before shrinking rewrites it
                            if cfg.sanitize and cfg.on_cuda() and wants_sanitizer(v.message):
                                jobs.add(["sanitize", entry, "--timeout", str(SANITIZER_TIMEOUT)],
                                         SANITIZER_TIMEOUT + 30)
                            if cfg.shrink:
                                jobs.add(["shrink", entry, "--time-budget", str(cfg.shrink_budget)],
                                         cfg.shrink_budget * 2 + 120)
                            if cfg.triage and kind.triage is None:  # after the shrink: of the minimal program
                                jobs.add(["triage", entry], TRIAGE_TIMEOUT)
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
                jobs.poll()
        if pool is not None:
            pool.close()
        jobs.finish(progress.note)
    except KeyboardInterrupt:
        result.interrupted = True
        jobs.kill()
    finally:
        if pool is not None:
            pool.close()
        state.save()
        state.close()
    result.summary = state.summary()
    return result


def config_dict(cfg: CampaignConfig) -> dict:
    return asdict(cfg)
