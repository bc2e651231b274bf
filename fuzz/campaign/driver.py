"""The fuzz campaign: generate programs in this process, judge them in
sandboxed workers (or in-process, or on a Ray cluster), bucket findings by
signature, record new ones in the corpus, queue their follow-up jobs (shrink
and merge, sanitizer; triage with --triage: fuzz/campaign/followups/runner.py) and keep resumable
state (fuzz/campaign/state.py).

run_campaign wires parts and runs the loop (docs/campaign.md is the map):
the source of programs (source.py), the executor (executor.py), the
recorder (recorder.py), the follow-up scheduler (followup.py), the disk
governor (disk.py), the wind-down (winddown.py) and progress (progress.py).
A new feature is a part, or a part's own business: not a branch here."""

from __future__ import annotations

import contextlib
import functools
import os
import time
from dataclasses import asdict, dataclass, field

from fuzz.campaign.disk import DiskGovernor
from fuzz.campaign.executor import open_executor
from fuzz.campaign.followups.supervisor import FollowUps
from fuzz.campaign.recorder import Recorder
from fuzz.campaign.sizing import drawing_processes, usable_cpus
from fuzz.campaign.source import CaseSource, open_guide
from fuzz.campaign.state import CampaignState, StateError
from fuzz.campaign.state_files import default_corpus  # noqa: F401 - where run and followup ask for it
from fuzz.campaign.followups.winddown import WindDown

# The per-case time limit `shapefuzz run` gives by device type (else 300 s). A hang
# holds its worker this long: on the H100 a cluster of 3 near-identical hanging
# programs took 18% of a 5-minute campaign's worker time at 300 s, while the
# slowest case that finished in four campaigns took 52 s.
CASE_TIMEOUT = {"cuda": 120.0}


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
    pair_aimed: bool = False  # each program made to hold a pair of pairwise coverage (strategies/aim.py)
    coverage: bool = False  # workers report the compiler lines each case reaches (fuzz/judge/coverage.py)
    guided: bool = False  # every other case a mutant of a program that reached new lines (fuzz/campaign/guide.py)
    modes: tuple | None = None  # torch.compile modes to sample (None: by device)
    options_menu: str = "auto"  # Inductor flags to sample: auto (by device), cuda, cpu, none
    sanitize: bool = True  # re-run memory-error findings under compute-sanitizer (CUDA, when installed)
    state_dir: str = "runs/default"
    corpus_dir: str | None = None  # None: STATE/corpus, beside the state dir (never a checkout's tracked corpus/)
    workers: int | None = 1  # 0: judge in this process (no sandbox); with ray: per node (None: by the node)
    ray: str | None = None  # judge on this Ray cluster (fuzz/campaign/cluster/pool.py): local, auto or HOST:PORT
    devices: list | None = None  # CUDA indices to pin workers to
    workers_per_gpu: int | None = 1  # (with ray, None: the node's CPUs are shared over its GPUs)
    timeout: float = 300.0  # per case, seconds (`shapefuzz run`'s default: CASE_TIMEOUT)
    known_issues: str | None = None  # default: <corpus_dir>/known_issues.json, else the reference corpus's
    # the corpus whose causes are counted under its rows rather than written anew (fuzz/findings/reference.py):
    # None: the corpus of the checkout shapefuzz runs from, where there is one; "none": no reference
    known_corpus: str | None = None
    shrink: bool = True  # shrink each new corpus entry (then re-key and merge it) beside the campaign
    shrink_budget: float = 300.0  # seconds per entry
    # ablate each new entry (after its shrink) beside the campaign; by default deferred until its report
    # (fuzz/findings/deferred_triage.py)
    triage: bool = False
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
        ident.update({k: True for k in ("swarm", "pair_aimed", "guided") if getattr(self, k)})
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


@dataclass
class Parts:
    """A campaign's parts, as run_campaign wires them (docs/campaign.md): each feature is one of them,
    not a branch of the loop."""
    cfg: CampaignConfig
    state: CampaignState
    cluster: object  # the Ray cluster joined (cluster/pool.py Cluster), or None
    disk: DiskGovernor  # the cache limit and its shares; a full disk stops the campaign
    followups: FollowUps  # the follow-up scheduler: one runner process beside the cases
    recorder: Recorder  # what each verdict leaves: the corpus, the state, the follow-ups queued
    source: CaseSource  # the programs, from the seed (swarm, guidance)
    executor: object  # where cases are judged (fuzz/campaign/executor.py)
    progress: object  # the lines of a running campaign (fuzz/campaign/progress.py)
    wind_down: WindDown | None  # a timed campaign's last minutes go to the shrinks
    result: CampaignResult


def run_campaign(cfg: CampaignConfig, *, progress=None, strategy=None, on_cases_done=None,
                 wait: bool = True) -> CampaignResult:
    """Run (or resume) the campaign of cfg.state_dir. Follow-up jobs on new
    entries (fuzz/campaign/followups/runner.py) run beside it in one runner process.
    When the cases are done, `on_cases_done(summary)` is called (the summary
    counts the follow-ups still pending); then, with `wait`, the follow-ups
    are finished (Ctrl-C stops them, to be resumed), else stopped and left
    pending for `shapefuzz followup` or a rerun."""
    # read and checked before the state dir is opened (and written)
    corpus, known, reference = _corpus_and_rules(cfg)
    kind = cfg.kind()
    cluster = None
    if cfg.ray is not None:  # joined before the state dir is opened: a cluster that cannot be had writes nothing
        from fuzz.campaign.cluster.pool import connect

        cluster = connect(None if cfg.ray == "auto" else cfg.ray)
    parts = _assemble(cfg, kind, corpus, known, reference, cluster, progress, strategy)
    return _drive(parts, on_cases_done, wait)


def reference_corpus(cfg: CampaignConfig) -> str | None:
    """The reference corpus of cfg's campaign: --known-corpus, else the checkout's own corpus; never a dir
    found where the command is started, and never the campaign's own corpus."""
    from fuzz.findings.reference import package_corpus

    named = cfg.known_corpus or os.environ.get("SHAPEFUZZ_KNOWN_CORPUS") or None
    if named == "none":
        return None
    root = named or package_corpus()
    if root is None:
        return None
    if named and not os.path.isdir(root):
        raise StateError(f"no reference corpus directory {named}")
    return None if os.path.realpath(root) == os.path.realpath(cfg.corpus_dir) else str(root)


def rules_path(cfg: CampaignConfig) -> str | None:
    """The known-issues rules of cfg's campaign: --known-issues, else the campaign corpus's own file, else
    the reference corpus's; never a file found where the command is started."""
    if cfg.known_issues:
        if not os.path.isfile(cfg.known_issues):
            raise StateError(f"no known-issues file {cfg.known_issues}")
        return cfg.known_issues
    ref = reference_corpus(cfg)
    for d in (cfg.corpus_dir, ref):
        if d and os.path.lexists(os.path.join(d, "known_issues.json")):
            return os.path.join(d, "known_issues.json")
    return None


def _corpus_and_rules(cfg: CampaignConfig):
    """The corpus (checked writable now, not at the first finding hours in), the known-issues rules and the
    reference corpus (named in the corpus's .reference.json for its follow-ups and `bugs`)."""
    from fuzz.files import check_writable_dir
    from fuzz.findings.store.corpus import Corpus, CorpusError
    from fuzz.findings.status.known import KnownIssues, KnownIssuesError
    from fuzz.findings.reference import REFERENCE_FILE, Reference, write_reference

    if os.path.exists(cfg.corpus_dir) and not os.path.isdir(cfg.corpus_dir):
        raise StateError(f"corpus {cfg.corpus_dir} is not a directory")
    corpus = Corpus(cfg.corpus_dir)
    known_path = rules_path(cfg)
    known = KnownIssues.load(known_path) if known_path else None
    try:
        check_writable_dir(cfg.corpus_dir)
    except OSError as e:
        raise StateError(f"corpus {cfg.corpus_dir} cannot be written: {e.strerror or e}"
                         f"{' (' + e.filename + ')' if getattr(e, 'filename', None) else ''}") from None
    ref_root = reference_corpus(cfg)
    try:
        reference = Reference(ref_root) if ref_root else None
    except (CorpusError, KnownIssuesError, OSError) as e:
        raise StateError(f"the reference corpus {ref_root} cannot be read: {e}") from None
    if ref_root:
        write_reference(cfg.corpus_dir, ref_root)
    elif os.path.lexists(os.path.join(cfg.corpus_dir, REFERENCE_FILE)):
        os.unlink(os.path.join(cfg.corpus_dir, REFERENCE_FILE))
    return corpus, known, reference


def _assemble(cfg, kind, corpus, known, reference, cluster, progress, strategy) -> Parts:
    """Open the state dir and make the parts; what is made is closed again if a later part fails."""
    with contextlib.ExitStack() as undo:
        if cluster is not None:
            undo.callback(cluster.close)
        state = CampaignState.open(cfg.state_dir, cfg.identity())
        undo.callback(state.close)
        state.corpus_dir = os.path.abspath(cfg.corpus_dir)
        os.makedirs(state.corpus_dir, exist_ok=True)  # checked above that it can be
        recipe = None
        if strategy is None:
            strategy = kind.strategy(cfg)
            recipe = functools.partial(campaign_strategy, cfg)  # drawn in processes where the CPUs allow
        if progress is None:
            from fuzz.campaign.progress import Progress

            progress = Progress()
        result = CampaignResult(summary={})
        disk = DiskGovernor(cfg)
        followups = FollowUps(cfg.state_dir, state.corpus_dir, ray=cluster.gcs if cluster is not None else None,  # with Ray: jobs there
                              env=disk.followup_env(cfg.state_dir))
        undo.callback(followups.stop)
        rec = Recorder(cfg, kind, state, corpus, known, followups, progress, result, reference=reference)
        rec.guide = open_guide(cfg, kind, state)
        wind_down = _wind_down(cfg, state, followups, progress)
        source = CaseSource(cfg, state, strategy, recipe=recipe, processes=drawing_processes() if cfg.workers else 0,
                            guide=rec.guide, programs=rec.programs, stop=_stop(cfg, state, wind_down))
        followups.poll()  # resume what an earlier session left pending
        executor = open_executor(cfg, kind, state, cluster=cluster, disk=disk, confirmed=rec.confirmed,
                                 cpus=usable_cpus(), note=progress.note)
        undo.pop_all()
    return Parts(cfg, state, cluster, disk, followups, rec, source, executor, progress, wind_down, result)


def _wind_down(cfg, state, followups, progress) -> WindDown | None:
    """With a time limit and shrinks, the last minutes go to the shrinks (fuzz/campaign/followups/winddown.py)."""
    if cfg.time_limit is None or not cfg.shrink:
        return None

    def begins():  # the follow-ups take every CPU now; the time is kept for scripts/case_rate.py
        followups.drain()
        state.wind_down_at = round(time.time(), 2)

    return WindDown(cfg.time_limit, lambda: state.elapsed, followups.log.refresh, slots=usable_cpus(),
                    default=cfg.shrink_budget, note=progress.note, begin=begins)


def _stop(cfg, state, wind_down):
    """Whether the campaign draws no more cases: its time limit, its wind-down, its count of findings."""
    def stop() -> bool:
        if cfg.time_limit is not None and state.elapsed > cfg.time_limit:
            return True
        if wind_down is not None and wind_down.due(time.monotonic()):
            return True
        return cfg.max_findings is not None and len(state.finding_cases) >= cfg.max_findings

    return stop


def _drive(c: Parts, on_cases_done, wait: bool) -> CampaignResult:
    """The loop: each verdict to the recorder, the state saved, progress shown, the follow-ups kept
    going; then the follow-ups finished (or left pending), and everything closed whatever happens."""
    from fuzz.campaign.progress import startup_line

    results = c.executor.run(c.source.cases())
    c.progress.note(startup_line(c.cfg.workers, pch=builds_pch(c.cfg, c.disk.compiling), ray=c.cluster is not None))
    try:
        with c.disk.stops_when_full(c.followups.stop):
            with c.progress:
                _judge(c, results)
            c.executor.close()
            c.executor.after_close(c.state)
            c.state.followups = c.followups.counts()
            c.state.save()
            c.result.summary = c.state.summary()
            if on_cases_done is not None:
                on_cases_done(c.result.summary)
            _finish_followups(c, wait)
    except KeyboardInterrupt:
        c.result.interrupted = True
        c.followups.stop()
    finally:
        getattr(results, "close", lambda: None)()  # the program stream: its drawing processes end now, not at garbage collection
        c.executor.close()
        c.state.followups = c.followups.counts()
        with contextlib.suppress(OSError):  # a full disk: the logs hold everything a resume needs
            c.state.save()
        c.state.close()
        if c.cluster is not None:
            c.cluster.close()
    c.result.followups = dict(c.state.followups)
    c.result.summary = c.state.summary()
    return c.result


def _judge(c: Parts, results) -> None:
    """Each verdict as it comes: recorded, the state saved every 2 s, progress shown, the follow-ups polled."""
    last_save = 0.0
    for i, vd, info in results:
        c.recorder.take(i, vd, info)
        c.executor.after_case(c.state)
        if time.monotonic() - last_save > 2.0:
            c.state.followups = c.followups.counts()
            c.state.save()
            last_save = time.monotonic()
        c.progress.update(c.state.summary())
        c.followups.poll()
        c.executor.balance(c.followups)


def _finish_followups(c: Parts, wait: bool) -> None:
    """The cases are done: with `wait` the follow-ups run to the end; after a wind-down, until the time
    limit; else they stop, left pending for later."""
    if wait:
        c.followups.finish(c.progress.note)
    elif c.wind_down is not None and c.wind_down.began:  # the rest of the time limit is the follow-ups'
        c.followups.finish(c.progress.note, until=time.monotonic() + c.wind_down.remaining())
    else:
        c.followups.stop()


def builds_pch(cfg: CampaignConfig, compiling: dict) -> bool:
    """Whether the campaign's first cases make Inductor's precompiled C++ header (CPU kernels; not under
    disk.PCH_FROM of cache limit; not where an earlier run on this machine kept one: fuzz/pch.py)."""
    from fuzz import pch
    from fuzz.devices import is_cuda
    from fuzz.judge.backends import backend

    return (backend(cfg.backend).inductor and not is_cuda(cfg.device)
            and "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS" not in compiling and not pch.kept_bytes())


def campaign_strategy(cfg: CampaignConfig):
    """The strategy of cfg's campaign (picklable with cfg: a drawing process builds it)."""
    return cfg.kind().strategy(cfg)


def config_dict(cfg: CampaignConfig) -> dict:
    return asdict(cfg)
