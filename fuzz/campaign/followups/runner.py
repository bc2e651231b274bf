"""Follow-up work on new corpus entries -- the sanitizer, the shrink (which
re-keys and merges the entry, fuzz/findings/dedupe.py) and, with `run
--triage`, the triage (by default deferred until the report:
fuzz/findings/deferred_triage.py) -- kept as campaign state, so that it
survives kill -9, Ctrl-C and a lost machine.

    state_dir/jobs.jsonl     one line per event, each appended in one write and
                             fsynced: {"job": "shrink:<key>", "event": "queued" |
                             "started" | "done" | "skipped" | "failed" | "aborted", ...};
                             an outcome's "cpu": the job's CPU-seconds by kind
                             (compute, checks, runner: fuzz/cputime.py)
    state_dir/followup.lock  held by the runner: never two runners on one state dir
    state_dir/followup.log   the runner's output

A job is one type of work on one entry, named by the provisional key the
entry was made under (the runner finds where the entry is now: it may have
been merged). The campaign queues a new entry's jobs; one runner process
(`python -m fuzz.campaign.followups.runner STATE`) runs them beside the campaign, one
at a time, shrinks before triages, each bounded by its timeout (the
supervisor, FollowUps, kills a runner past it and fails the job). Once the
campaign's cases are done (or under `shapefuzz followup`), the runner runs
several jobs at once, one per usable CPU (fuzz/campaign/followups/local.py). A job is
done once: a job that was started and never finished (its runner was killed)
is started again once, then failed; the supervisor stopping a runner itself
(Ctrl-C) records "aborted", which does not count; so does a job that met a
full disk (run_job). Rerunning the campaign, or `shapefuzz followup STATE`,
picks up whatever is pending.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import sys
import time
from dataclasses import dataclass, field

from fuzz.campaign.errors import StateError

SANITIZER_TIMEOUT = 600.0  # seconds for one compute-sanitizer re-run of a repro
TRIAGE_TIMEOUT = 1200.0  # seconds for one entry's whole ablation (about 15 variants, a compile each)
MAX_STARTS = 2  # a job started this many times without finishing is failed
RECYCLE_AFTER = 100  # jobs one runner process runs before a fresh one takes over (memory)
BUSY = 75  # the runner's exit status when another runner holds the state dir (EX_TEMPFAIL)
TIMEOUT_GRACE = 60.0  # seconds past a job's timeout before the supervisor kills its runner
LINGER = 20.0  # seconds an idle runner waits for new jobs while its campaign runs
_TERMINAL = ("done", "skipped", "failed")
_FIRST = {"sanitize": 0, "shrink": 0, "triage": 1}  # the sanitizer runs the repro as found; triage the shrunk one
_START = b'{"job": "'  # how every line JobLog.append writes begins


@dataclass
class Job:
    id: str
    type: str
    entry: str  # the provisional key the entry was made under
    order: int
    params: dict = field(default_factory=dict)  # budget (shrink), timeout (per case); job_timeout
    corpus: str | None = None  # the corpus the runner was told (never one a record names: the log is data)
    state: str = "queued"  # queued | running | done | skipped | failed
    starts: int = 0
    aborts: int = 0
    pid: int | None = None  # of the runner that started it last
    started_at: float | None = None
    finished_at: float | None = None
    detail: str = ""

    @property
    def ended(self) -> bool:
        """Done, skipped or failed: nothing more runs it."""
        return self.state in _TERMINAL

    @property
    def unfinished_starts(self) -> int:
        """Starts that ended in neither an outcome nor an abort: runner crashes."""
        return self.starts - self.aborts

    def timeout(self) -> float:
        if "job_timeout" in self.params:
            return float(self.params["job_timeout"])
        if self.type == "shrink":
            # past its budget a shrink may still judge, each up to a case's timeout: the
            # original's try, the case running at the deadline, the re-checks and two standalone
            # runs. A hang's cases all take that long (at 2 x budget, a soak's hang shrink was killed)
            from fuzz.findings.shrink.engine import DEFAULT_RERUNS  # light: no torch, no hypothesis

            return float(self.params.get("budget", 300.0)) \
                + (DEFAULT_RERUNS + 4) * float(self.params.get("timeout", 300.0)) + 120.0
        return SANITIZER_TIMEOUT + 30.0 if self.type == "sanitize" else TRIAGE_TIMEOUT


class JobLog:
    """jobs.jsonl, read incrementally (each line checked by its schema, fuzz/campaign/state_files.py); appends
    are single writes (O_APPEND), fsynced. `corpus`: the corpus the jobs work on (the runner's)."""

    def __init__(self, state_dir: str, corpus: str | None = None):
        self.path = os.path.join(state_dir, "jobs.jsonl")
        self.corpus = corpus
        self.jobs: dict[str, Job] = {}
        self._offset = 0
        self._lines = 0  # lines read so far, to name a bad one

    def refresh(self) -> "JobLog":
        """Read the lines appended since the last refresh. StateError for a line
        that is no record (a hand edit, another file), left unread: only a line
        torn by a kill mid-write (a record's beginning; append closed it) is skipped."""
        from fuzz.campaign.state_files import read_log_bytes, record

        data = read_log_bytes(self.path, self._offset)
        end = data.rfind(b"\n") + 1  # a line without its newline is still being written (or torn)
        for line in data[:end].split(b"\n")[:-1]:
            rec = record(line, "jobs.jsonl")
            why = rec if isinstance(rec, str) else self._apply(rec)
            if why:
                # a torn line (a record's beginning), or an empty one (two appends closing one): skipped
                torn = not line.strip() or line.startswith(_START) or _START.startswith(line)
                if torn and not _is_json(line):
                    self._offset, self._lines = self._offset + len(line) + 1, self._lines + 1
                    continue
                raise StateError(f"{self.path}: line {self._lines + 1} is not a record of this log ({why}: "
                                 f"{line[:60]!r}); the file is corrupt: fix or remove that line")
            self._offset += len(line) + 1
            self._lines += 1
        return self

    def _apply(self, r: dict) -> str | None:
        """Apply a checked record; why it cannot be applied (a field its event needs), else None."""
        job, ev = self.jobs.get(r["job"]), r["event"]
        if ev == "queued":
            if r.get("type") is None or r.get("entry") is None or r["job"] != f"{r['type']}:{r['entry']}":
                return "a queued job names its type and entry key, as its name does"
            if job is None:
                params = {k: v for k, v in r.get("params", {}).items() if k != "corpus"}  # the runner's, not the log's
                self.jobs[r["job"]] = Job(id=r["job"], type=r["type"], entry=r["entry"], order=len(self.jobs),
                                          params=params, corpus=self.corpus)
            return None
        if job is None or job.ended:
            return None
        if ev == "started":
            if not isinstance(r.get("time"), (int, float)):
                return "a start has its time"
            job.state, job.starts, job.pid, job.started_at = "running", job.starts + 1, r.get("pid"), r["time"]
        elif ev == "aborted":
            job.state, job.aborts = "queued", job.aborts + 1
        elif ev in _TERMINAL:
            job.state, job.detail, job.finished_at = ev, r.get("detail", ""), r.get("time")
        return None

    def append(self, job_id: str, event: str, **fields) -> None:
        from fuzz.files import open_regular

        line = (json.dumps({"job": job_id, "event": event, "time": time.time(), **fields}) + "\n").encode()
        fd = open_regular(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            if os.fstat(fd).st_size and os.pread(fd, 1, os.fstat(fd).st_size - 1) != b"\n":
                line = b"\n" + line  # close a line torn by a kill
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.refresh()

    def queue(self, entry: str, types, params: dict) -> None:
        """Queue each of `types` for the entry of provisional key `entry` (once ever)."""
        self.refresh()
        for t in types:
            if f"{t}:{entry}" not in self.jobs:
                self.append(f"{t}:{entry}", "queued", type=t, entry=entry, params=params)

    def known(self, entry: str) -> bool:
        return any(j.entry == entry for j in self.jobs.values())

    def pending(self) -> list[Job]:
        """Jobs not finished, in the order they run: shrinks (and sanitizer runs) first, then triages."""
        return sorted((j for j in self.jobs.values() if not j.ended and j.id not in _DISK_FULL_HERE),
                      key=lambda j: (_FIRST.get(j.type, 1), j.order))

    def counts(self) -> dict:
        out = {"pending": 0, "done": 0, "skipped": 0, "failed": 0}
        for j in self.jobs.values():
            out["pending" if not j.ended else j.state] += 1
        return out


def _is_json(line: bytes) -> bool:
    from fuzz.datafile import DataFileError, loads

    try:
        loads(line)
    except DataFileError:
        return False
    return True


# -- running a job (in the runner process) --------------------------------------------

def _digest(program) -> str:
    import hashlib

    return hashlib.sha256(program.to_json(sort_keys=True).encode()).hexdigest()[:8]


# Jobs that met a full disk in this process: "aborted" (queued again, not counted as a start) and not run again
# by this runner; the next runner (a resumed campaign, `shapefuzz followup`) retries them. The corpus writes of
# a shrink are each atomic and its re-key is idempotent, so the retry finishes a merge the full disk cut short
# (a half-made minimal entry beside the unshrunk one) instead of leaving one bug as two entries.
_DISK_FULL_HERE: set = set()


def run_job(job: Job, remote=None) -> tuple[str, str]:
    """Do one job; (event, detail): done or skipped, or aborted when the disk is full (retried on resume).
    Raises on failure. remote: a Ray cluster to compute on (fuzz/campaign/cluster/followups.py Remote); the
    corpus is written here."""
    import errno

    try:
        return _run_job(job, remote)
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        _DISK_FULL_HERE.add(job.id)
        return "aborted", f"the disk is full ({e.strerror or e}): retried when the follow-ups resume"


def _run_job(job: Job, remote=None) -> tuple[str, str]:
    from fuzz.findings.store.corpus import Corpus
    from fuzz.findings.store.corpus import KNOWN, UNCONFIRMED

    if job.corpus is None:
        raise ValueError("the runner was told no corpus")
    corpus = Corpus(job.corpus)
    path = corpus.resolve(job.entry)  # an entry key by the log's schema, never a path
    if path is None:
        return "skipped", "no such entry in the corpus (removed by hand?)"
    if path.parent.name == UNCONFIRMED:
        return "skipped", f"{path.name} is set aside: it does not fail alone in a fresh process"
    if path.parent.name == KNOWN:
        return "skipped", f"{path.name} is set aside: its cause is in the reference corpus"
    if job.type == "sanitize":
        from fuzz.findings.sanitizer import sanitize_entry, write_report

        if remote is not None:
            text = remote.run("sanitize", path, {"sanitizer_timeout": SANITIZER_TIMEOUT}, job.timeout(), gpu=True)
            if text is not None:
                write_report(str(path), text)
        else:
            text = sanitize_entry(str(path), timeout=SANITIZER_TIMEOUT)
        return ("done", (text or "").splitlines()[0][:200] if text else "") if text is not None else \
            ("skipped", "compute-sanitizer is not installed")
    if job.type == "shrink":
        from fuzz.findings.dedupe import settle

        with _checks_reuse_kernels(remote):
            s = settle(corpus, path, time_budget=float(job.params.get("budget", 300.0)),
                       timeout=float(job.params.get("timeout", 300.0)),
                       shrinker=remote.shrinker(job.timeout(), _on_cuda(corpus, path)) if remote is not None else None)
        return ("done" if s.key is not None else "skipped"), s.line()
    if job.type == "triage":
        from fuzz.findings.triage import load_ablation, triage_entry
        from fuzz.kinds import kind_of

        entry = corpus.load(path)
        if kind_of(entry.program).triage:
            return "skipped", kind_of(entry.program).triage
        doc = load_ablation(path)
        if doc is not None and doc.get("program") == entry.program.to_dict():
            return "skipped", f"{path.name} is triaged already (its program as it is now)"
        if remote is not None:
            from fuzz.findings.triage import write_ablation

            write_ablation(path, remote.run("triage", path, {"timeout": job.params.get("timeout", 300.0)},
                                            job.timeout(), gpu=_on_cuda(corpus, path)))
        else:
            triage_entry(path, timeout=float(job.params.get("timeout", 300.0)))
        # the program names which triage this was: a merge may make a smaller variant the
        # entry's program after its triage, and then its ablation is made again, once
        return "done", f"triaged {path.name} program {_digest(entry.program)}" + (
            f" ({remote.where})" if remote is not None else "")
    raise ValueError(f"unknown job type {job.type!r}")


def _checks_reuse_kernels(remote):
    """The shrink's standalone checks start from the kernels its compiles left (fuzz/judge/warm_kernels.py):
    this runner's caches when it computes the job itself, the job's own when a LocalRemote keeps them for the
    checks; none from a Ray node's (its caches are on another machine)."""
    import contextlib

    from fuzz.judge.warm_kernels import reusing

    if remote is not None:
        return getattr(remote, "checks_reuse_kernels", contextlib.nullcontext)()
    if not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):  # the user's default cache: not the runner's to hand on
        return contextlib.nullcontext()
    return reusing((os.environ["TORCHINDUCTOR_CACHE_DIR"], os.environ.get("TRITON_CACHE_DIR")))


def _on_cuda(corpus, path) -> bool:
    from fuzz.devices import is_cuda

    return is_cuda(corpus.load(path).program.device_type())


def _lock(state_dir: str):
    """The runner lock, held until the process ends; None when another runner has it."""
    from fuzz.files import open_regular

    f = os.fdopen(open_regular(os.path.join(state_dir, "followup.lock"), os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return None
    return f


def _told_to_drain(timeout: float) -> bool:
    """Whether stdin is at its end (the supervisor closed it: finish and go); waits up to `timeout`."""
    try:
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        return bool(ready) and os.read(sys.stdin.fileno(), 4096) == b""
    except (OSError, ValueError):
        return True


def run_pending(state_dir: str, corpus: str | None = None, *, linger: float = 0.0, max_jobs: int = RECYCLE_AFTER,
                log=print, ray: str | None = None, told_to_drain=_told_to_drain) -> int | None:
    """The runner: run pending jobs in order until none is left (then wait up to
    `linger` seconds for more, unless told to drain: by default, stdin ends), at most `max_jobs`. Returns
    how many ran; None at once when another runner holds the state dir.
    corpus: the corpus the jobs work on (default: the state dir's own, STATE/corpus).
    ray: the address of a Ray cluster to compute the jobs on, several at once.
    told_to_drain(timeout): whether to finish what is pending and go, waiting up to `timeout` seconds to know."""
    lock = _lock(state_dir)
    if lock is None:
        log("another follow-up runner holds this state dir")
        return None
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR", "").startswith(os.path.abspath(state_dir) + os.sep):
        from fuzz.campaign.disk import reset_followup_cache

        reset_followup_cache(state_dir)  # what a runner before this one (killed, or over its share) left
    from fuzz.campaign.state_files import default_corpus

    jobs = JobLog(state_dir, corpus or default_corpus(state_dir))
    remote = None
    if ray is not None:
        from fuzz.campaign.cluster.followups import Remote

        try:
            remote = Remote(ray, log=log)
        except Exception as e:  # noqa: BLE001 - a runner that cannot join must still run the jobs (here)
            log(f"cannot join the Ray cluster at {ray} ({type(e).__name__}: {e}); running the jobs here")
    if remote is None:
        from fuzz.campaign.followups.local import PARALLEL_FROM, LocalRemote
        from fuzz.campaign.sizing import usable_cpus

        slots = usable_cpus()
        ran = 0
        if slots < PARALLEL_FROM:
            # a share of one job beside the cases (under 8 CPUs): one after another in this process, which
            # spares each job a process start; in parallel once the cases are done
            ran, drain_in_parallel = _one_at_a_time(jobs, linger=linger, max_jobs=max_jobs, log=log,
                                                    switch=slots > 1, told_to_drain=told_to_drain)
            if not drain_in_parallel:
                lock.close()
                return ran
            linger, max_jobs = 0.0, max_jobs - ran
        # beside the cases, a share of the CPUs that grows with the queue; all of them once the cases end
        remote = LocalRemote(slots, log=log, beside_cases=linger > 0)
        log(f"--- up to {slots} jobs at once" + (" (beside the cases: fewer, by the queue)" if linger > 0 else ""))
    else:
        ran = 0
    from fuzz.campaign.followups.schedule import run_parallel

    try:
        return ran + run_parallel(jobs, remote, linger=linger, max_jobs=max_jobs, log=log, run_job=run_job,
                                  max_starts=MAX_STARTS, order=_FIRST, told_to_drain=told_to_drain)
    finally:
        remote.close()
        lock.close()


def _one_at_a_time(jobs: JobLog, *, linger: float, max_jobs: int, log, switch: bool,
                   told_to_drain=_told_to_drain) -> tuple[int, bool]:
    """Run pending jobs one at a time, in this process: beside a campaign's
    cases, follow-ups take one CPU. Returns (jobs run, whether to go on with
    several at once): with `switch`, once the cases are done (told to drain)
    and more than one job waits."""
    ran, idle_since, draining = 0, time.monotonic(), linger <= 0
    while ran < max_jobs:
        pending = jobs.refresh().pending()
        if switch and len(pending) > 1 and (draining or told_to_drain(0)):
            return ran, True
        if not pending:
            if draining or time.monotonic() - idle_since > linger:
                break
            draining = told_to_drain(0.5)
            continue
        job = pending[0]
        from fuzz.campaign.followups.schedule import start

        attempt = start(jobs, job, MAX_STARTS)
        if attempt is None:
            continue
        log(f"--- {job.id}" + (f" (attempt {attempt}: the last one never finished)" if attempt > 1 else ""))
        from fuzz import cputime

        with cputime.metered(in_process=True) as cpu:
            try:
                event, detail = run_job(job)
            except Exception as e:  # noqa: BLE001 - one job must not stop the others
                event, detail = "failed", f"{type(e).__name__}: {e}"
        log(f"    {event}: {detail}")
        jobs.append(job.id, event, detail=detail[:1000], cpu=cpu)
        ran += 1
        idle_since = time.monotonic()
        from fuzz.campaign.disk import over_share

        if over_share(os.path.dirname(jobs.path)):  # the next runner starts with empty caches
            log("--- the follow-ups' caches are over their share of the cache limit: a fresh runner goes on")
            break
    return ran, False


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m fuzz.campaign.followups.runner", description="run a campaign's pending "
                                 "follow-up jobs (started by the campaign or `shapefuzz followup`)")
    ap.add_argument("state_dir")
    ap.add_argument("--corpus", default=None, help="the corpus the jobs work on (default: STATE/corpus)")
    ap.add_argument("--linger", type=float, default=0.0, help="seconds to wait for new jobs while stdin is open")
    ap.add_argument("--ray", default=None, help="compute the jobs on the Ray cluster at this (GCS) address")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides; Ctrl-C reaches it
    from fuzz.campaign.lifeline import exit_with_parent

    # with the supervisor (even a SIGKILLed one): its job stays "started", and the next runner starts it again
    exit_with_parent(0.5, "shapefuzz-followup-watch")
    ran = run_pending(args.state_dir, args.corpus, linger=args.linger, log=lambda m: print(m, flush=True), ray=args.ray)
    return BUSY if ran is None else 0


if __name__ == "__main__":
    sys.exit(main())
