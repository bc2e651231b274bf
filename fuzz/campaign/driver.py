"""The fuzz campaign: generate programs in this process, judge them in
sandboxed workers (or in-process), bucket findings by signature, record new
ones in the corpus, queue their follow-up jobs (shrink and merge, triage,
sanitizer: fuzz/campaign/followup.py) and keep resumable state
(fuzz/campaign/state.py)."""

from __future__ import annotations

import contextlib
import functools
import os
import time
from dataclasses import asdict, dataclass, field

from fuzz.campaign.disk import (DiskFull, cache_shares, compile_env, default_cache_limit, disk_full, followup_env,
                                is_disk_full)
from fuzz.campaign.followup import FollowUps
from fuzz.campaign.generate import generate
from fuzz.campaign.recorder import Recorder
from fuzz.campaign.sizing import drawing_processes, usable_cpus
from fuzz.campaign.state import CampaignState, StateError
from fuzz.campaign.winddown import WindDown
from fuzz.judge.coverage import ENV as ENV_COVERAGE


# The per-case time limit `shapefuzz run` gives by device type (else 300 s). A hang
# holds its worker this long: on the H100 a cluster of 3 near-identical hanging
# programs took 18% of a 5-minute campaign's worker time at 300 s, while the
# slowest case that finished in four campaigns took 52 s.
CASE_TIMEOUT = {"cuda": 120.0}


def default_corpus(state_dir: str) -> str:
    """Where a campaign without --corpus saves its findings: beside its state."""
    return os.path.join(state_dir, "corpus")


@dataclass
class CampaignConfig:
    backend: str = "inductor"
    device: str = "cpu"
    seed: int = 0
    max_cases: int | None = 20
    time_limit: float | None = None  # seconds, over all sessions of this state dir
    max_findings: int | None = None  # stop once this many findings (new or known) are logged
    max_ops: int = 6
    families: tuple | None = None  # op families to draw (None: all)
    ops: tuple | None = None  # ops to draw (None: all)
    swarm: bool = False  # each batch draws from a random part of the menu (strategies/swarm.py)
    coverage: bool = False  # workers report the compiler lines each case reaches (fuzz/judge/coverage.py)
    guided: bool = False  # every other case a mutant of a program that reached new lines (fuzz/campaign/guide.py)
    modes: tuple | None = None  # torch.compile modes to sample (None: by device)
    options_menu: str = "auto"  # Inductor flags to sample: auto (by device), cuda, cpu, none
    sanitize: bool = True  # re-run memory-error findings under compute-sanitizer (CUDA, when installed)
    state_dir: str = "runs/default"
    corpus_dir: str | None = None  # None: STATE/corpus, beside the state dir (never a checkout's tracked corpus/)
    workers: int | None = 1  # 0: judge in this process (no sandbox); with ray: per node (None: by the node)
    ray: str | None = None  # judge on this Ray cluster (fuzz/campaign/ray_pool.py): local, auto or HOST:PORT
    devices: list | None = None  # CUDA indices to pin workers to
    workers_per_gpu: int | None = 1  # (with ray, None: the node's CPUs are shared over its GPUs)
    timeout: float = 300.0  # per case, seconds (`shapefuzz run`'s default: CASE_TIMEOUT)
    known_issues: str | None = None  # default: <corpus_dir>/known_issues.json
    shrink: bool = True  # shrink each new corpus entry (then re-key and merge it) beside the campaign
    shrink_budget: float = 300.0  # seconds per entry
    triage: bool = True  # ablate each new entry (after its shrink) beside the campaign
    cache_limit: int | None = None  # bytes of compile caches (None: disk.DEFAULT_FRACTION of the free space)

    def __post_init__(self):
        if self.corpus_dir is None:
            self.corpus_dir = default_corpus(self.state_dir)

    def identity(self) -> dict:
        """What must match to resume a state dir (not limits or resources)."""
        ident = {"backend": self.backend, "device": self.device, "seed": self.seed, "max_ops": self.max_ops,
                 "modes": list(self.resolved_modes()), "options": self.resolved_options()}
        # a narrowed menu draws other programs; named only when set, so older state dirs still resume
        ident.update({k: list(v) for k, v in (("families", self.families), ("ops", self.ops)) if v})
        ident.update({k: True for k in ("swarm", "guided") if getattr(self, k)})
        return ident

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
    followups: dict = field(default_factory=dict)  # job counts once the campaign returned (pending: left for later)


def run_campaign(cfg: CampaignConfig, *, progress=None, strategy=None, on_cases_done=None,
                 wait: bool = True) -> CampaignResult:
    """Run (or resume) the campaign of cfg.state_dir. Follow-up jobs on new
    entries (fuzz/campaign/followup.py) run beside it in one runner process.
    When the cases are done, `on_cases_done(summary)` is called (the summary
    counts the follow-ups still pending); then, with `wait`, the follow-ups
    are finished (Ctrl-C stops them, to be resumed), else stopped and left
    pending for `shapefuzz followup` or a rerun."""
    from fuzz.files import check_writable_dir
    from fuzz.findings.corpus import Corpus
    from fuzz.findings.known import KnownIssues
    from fuzz.campaign.progress import Progress, startup_line

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
    try:  # now, not at the first finding hours in
        check_writable_dir(cfg.corpus_dir)
    except OSError as e:
        raise StateError(f"corpus {cfg.corpus_dir} cannot be written: {e.strerror or e}"
                         f"{' (' + e.filename + ')' if getattr(e, 'filename', None) else ''}") from None
    kind = cfg.kind()
    cluster = None
    if cfg.ray is not None:  # joined before the state dir is opened: a cluster that cannot be had writes nothing
        from fuzz.campaign.ray_pool import connect

        cluster = connect(None if cfg.ray == "auto" else cfg.ray)
    try:
        state = CampaignState.open(cfg.state_dir, cfg.identity())
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    state.corpus_dir = os.path.abspath(cfg.corpus_dir)
    os.makedirs(state.corpus_dir, exist_ok=True)  # checked above that it can be
    recipe = None
    if strategy is None:
        strategy = kind.strategy(cfg)
        recipe = functools.partial(campaign_strategy, cfg)  # drawn in processes where the CPUs allow
    progress = progress or Progress()
    result = CampaignResult(summary={})
    limit = cfg.cache_limit or default_cache_limit(cfg.state_dir)
    workers_share, followup_share = cache_shares(limit, cfg.workers or 1)
    compiling = compile_env(limit)
    # the follow-up runner: caches and scratch under the state dir, its share of the limit
    followups = FollowUps(cfg.state_dir, ray=cluster.gcs if cluster is not None else None,  # with Ray: jobs there
                          env={**followup_env(cfg.state_dir, followup_share), **compiling})
    rec = Recorder(cfg, kind, state, corpus, known, followups, progress, result)
    if cfg.guided:
        from fuzz.campaign.guide import Guide

        try:
            rec.guide = Guide(state, kind.mutation_menu(cfg), cfg.seed, backend=cfg.backend, device=cfg.device)
        except BaseException:
            followups.stop()
            state.close()
            raise
    def wind_down_begins():  # the follow-ups take every CPU now; the time is kept for scripts/case_rate.py
        followups.drain()
        state.wind_down_at = round(time.time(), 2)

    wind_down = None
    if cfg.time_limit is not None and cfg.shrink:  # the last minutes go to the shrinks (fuzz/campaign/winddown.py)
        wind_down = WindDown(cfg.time_limit, lambda: state.elapsed, followups.log.refresh, slots=usable_cpus(),
                             default=cfg.shrink_budget, note=progress.note, begin=wind_down_begins)

    def cases():
        start = state.generation_start()  # a resume draws from the batch of its first unjudged case
        for i, p in enumerate(generate(strategy, seed_=cfg.seed, count=cfg.max_cases, start=start,
                                       on_batch=state.record_batch, recipe=recipe,
                                       processes=drawing_processes() if cfg.workers else 0),
                              start=start.produced):
            if cfg.time_limit is not None and state.elapsed > cfg.time_limit:
                return
            if wind_down is not None and wind_down.due(time.monotonic()):
                return
            if cfg.max_findings is not None and len(state.finding_cases) >= cfg.max_findings:
                return
            if i in state.done:
                continue
            if rec.guide is not None:
                p = rec.guide.program_for(i, p)
            rec.programs[i] = p
            yield i, p.to_dict()

    from fuzz.campaign.followup_local import workers_to_pause
    from fuzz.campaign.workers import WorkerPool

    pool = None
    cpus = usable_cpus()
    followups.poll()  # resume what an earlier session left pending
    try:
        if cluster is not None:
            from fuzz.campaign.ray_pool import RayPool

            pool = RayPool(cluster, kind=kind, timeout=cfg.timeout, workers=cfg.workers,
                           workers_per_gpu=cfg.workers_per_gpu,
                           cuda=cfg.on_cuda(), env=kind.worker_env(), recycle_after=kind.recycle_after,
                           note=progress.note)
    except BaseException:
        followups.stop()
        state.close()
        cluster.close()
        raise
    if pool is not None:
        results = pool.run(cases())
    elif cfg.workers > 0:
        pool = WorkerPool(workers=cfg.workers, devices=cfg.devices, workers_per_gpu=cfg.workers_per_gpu,
                          timeout=cfg.timeout, workdir=os.path.join(cfg.state_dir, "workers"), kind=kind,
                          recycle_after=kind.recycle_after, env={**(kind.worker_env() or {}), **compiling,
                                                                 **({ENV_COVERAGE: "1"} if cfg.coverage or cfg.guided else {})},
                          similar=kind.similar_key, cache_limit=workers_share, rerun_cold_hangs=True,
                          note=progress.note)
        pool.confirmed = rec.confirmed
        results = pool.run(cases())
    else:
        results = kind.in_process(cases(), confirmed=rec.confirmed)
    progress.note(startup_line(cfg.workers, pch=builds_pch(cfg, compiling), ray=cluster is not None))
    last_save = 0.0
    restarts_before = state.restarts.copy()
    try:
        with progress:
            for i, vd, info in results:
                rec.take(i, vd, info)
                if pool is not None:
                    state.restarts = restarts_before + pool.restarts
                if cluster is not None:
                    state.nodes = pool.node_summary()
                if time.monotonic() - last_save > 2.0:
                    state.followups = followups.counts()
                    state.save()
                    last_save = time.monotonic()
                progress.update(state.summary())
                followups.poll()
                if isinstance(pool, WorkerPool):  # the CPUs of the follow-up jobs running come out of the workers
                    pool.paused = workers_to_pause(pool.workers, cpus, followups.running())
        if pool is not None:
            pool.close()
        if cluster is not None:
            state.nodes = pool.node_summary()
        state.followups = followups.counts()
        state.save()
        result.summary = state.summary()
        if on_cases_done is not None:
            on_cases_done(result.summary)
        if wait:
            followups.finish(progress.note)
        elif wind_down is not None and wind_down.began:  # the rest of the time limit is the follow-ups'
            followups.finish(progress.note, until=time.monotonic() + wind_down.remaining())
        else:
            followups.stop()
    except KeyboardInterrupt:
        result.interrupted = True
        followups.stop()
    except OSError as e:  # a write of the state dir or the corpus
        if not is_disk_full(e):
            raise
        followups.stop()
        raise disk_full(f"{e.filename or 'a write'}: {e.strerror}") from None
    except DiskFull:
        followups.stop()
        raise
    finally:
        getattr(results, "close", lambda: None)()  # the program stream: its drawing processes end now, not at garbage collection
        if pool is not None:
            pool.close()
        state.followups = followups.counts()
        with contextlib.suppress(OSError):  # a full disk: the logs hold everything a resume needs
            state.save()
        state.close()
        if cluster is not None:
            cluster.close()
    result.followups = dict(state.followups)
    result.summary = state.summary()
    return result


def builds_pch(cfg: CampaignConfig, compiling: dict) -> bool:
    """Whether the campaign's first cases make Inductor's precompiled C++ header (CPU kernels; not under
    disk.PCH_FROM of cache limit)."""
    from fuzz.devices import is_cuda
    from fuzz.judge.backends import backend

    return (backend(cfg.backend).inductor and not is_cuda(cfg.device)
            and "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS" not in compiling)


def campaign_strategy(cfg: CampaignConfig):
    """The strategy of cfg's campaign (picklable with cfg: a drawing process builds it)."""
    return cfg.kind().strategy(cfg)


def config_dict(cfg: CampaignConfig) -> dict:
    return asdict(cfg)
