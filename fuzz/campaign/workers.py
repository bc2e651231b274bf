"""A pool of persistent, sandboxed worker processes that judge cases.

Each worker is a spawned process (never forked: the parent may hold a CUDA context) that receives program
dicts over a pipe and answers with verdict dicts from fuzz.judge.runner.run_case. The parent is
single-threaded: it waits on every worker's pipe and process sentinel at once, so a worker that dies (signal,
OOM killer) or passes its per-case deadline is noticed at once, turned into a CRASH or HANG verdict with the
tail of its stderr, and replaced. A worker is also replaced after an error that poisons its process (CUDA)
and after `recycle_after` cases (memory growth).

A finding is rerun to tell a flaky one from a bug, unless its signature
is one the caller put in `confirmed` (a campaign: one that held before).
Programs alike (the kind's similar_key: Hypothesis draws a program again
with other dims marked) are judged one after another, never at once; once
one hangs, the rest are SKIPPED, not held for the same time limit each.

This module does not import torch: the parent only generates and schedules.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import multiprocessing as mp
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import weakref
from collections import Counter, deque
from dataclasses import dataclass
from multiprocessing.connection import wait as _wait
from typing import Iterable, Iterator

from fuzz import pch
from fuzz.campaign.cold_start import ColdStart
from fuzz.campaign.lifeline import exit_with_parent
from fuzz.campaign.sizing import size_pool
from fuzz.files import confined, open_regular
from fuzz.judge.poison import replace_cause
from fuzz.judge.isolated import faulthandler_frames, signal_name, with_tail
from fuzz.judge.verdict import Outcome, Stage, Verdict

TAIL_LINES = 40
_TAIL_BYTES = 256 << 10
_HANG_DUMP_WAIT = 1.0  # seconds given a hung worker to dump its stacks before it is killed


class WorkerStartError(RuntimeError):
    """Workers keep failing to start (broken environment): the pool cannot run."""


# -- the worker process -------------------------------------------------------

def _worker_main(conn, env: dict, log_path: str, rerun: bool, check_strides: bool, kind=None) -> None:
    # Own process group: terminal Ctrl-C reaches only the parent, and the
    # parent kills the worker together with any compiler subprocesses.
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.environ.update(env)  # also set at spawn; repeated in case the parent's __main__ imported torch
    import faulthandler

    faulthandler.enable(all_threads=True)  # Python stacks in the log on SIGSEGV/SIGABRT
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the parent asks for stacks of a hang
    exit_with_parent()  # no worker is orphaned (its own group: compiler subprocesses go along)

    if kind is None:  # torch.compile programs, the default
        from fuzz.judge.runner import evaluate_dict as evaluate, prepare_process as prepare
    else:
        prepare, evaluate = kind.prepare_worker, kind.evaluate
    prepare()
    from fuzz import heap
    from fuzz.campaign.disk import cache_bytes
    from fuzz.judge import coverage

    heap.freeze_imports()  # what torch's imports and the warm-up left: no case's collections walk it again
    coverage.start_if_asked()  # after prepare: its imports and warm-up are no case's lines
    coverage.take()
    share = int(env["SHAPEFUZZ_CACHE_SHARE"]) if env.get("SHAPEFUZZ_CACHE_SHARE") else None
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        token, program, confirmed = msg
        start = time.perf_counter()
        verdict, error, extra = evaluate(program, rerun=rerun, check_strides=check_strides, confirmed=confirmed)
        if share is not None:  # measured here, not in the parent's event loop
            extra = dict(extra or {}, cache_bytes=cache_bytes(env))
        lines = coverage.take()
        if lines is not None:
            extra = dict(extra or {}, coverage=lines)
        conn.send(("result", token, verdict, time.perf_counter() - start, error, extra))
        sys.stdout.flush()
        sys.stderr.flush()


# -- the parent side ----------------------------------------------------------

@dataclass
class _Job:
    case_id: object
    token: int
    timeout: float
    started: float
    key: str | None = None  # similar_key of its program
    program: dict | None = None  # kept to judge it again after a cold hang


@dataclass
class _Worker:
    slot: int
    device: int | None
    proc: object
    conn: object
    log_path: str
    spawned: float
    ready: bool = False
    cases: int = 0
    job: _Job | None = None
    log_offset: int = 0


_env_lock = threading.Lock()
_live_pools: "weakref.WeakSet[WorkerPool]" = weakref.WeakSet()


@contextlib.contextmanager
def _environ(env: dict):
    """os.environ plus env, for spawning: a spawned child copies the parent's
    environment, so the variables are set before its interpreter starts."""
    with _env_lock:
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


class WorkerPool:
    """Persistent sandboxed workers. Submit (case_id, program) pairs and read
    (case_id, verdict_dict, info) triples as they complete, in any order:

        with WorkerPool(workers=2, timeout=300) as pool:
            for case_id, verdict, info in pool.run((i, p.to_dict()) for i, p in enumerate(progs)):
                ...

    info: worker (slot), pid, device, wall (seconds the worker spent on the
    case; None when it died or hung), elapsed (seconds since dispatch),
    error ("program", "harness" or None), restart (the cause if the worker
    was replaced after this case, else None) and, for step programs, program
    (the standalone program that reproduced a history-dependent finding).

    kind: the program kind judged (fuzz.kinds; sent to each worker, whose
    prepare_worker and evaluate it calls), or None for torch.compile programs
    (fuzz.judge.runner). The pool itself knows no kind.
    """

    def __init__(self, workers: int | None = None, devices: Iterable[int] | None = None,
                 workers_per_gpu: int | None = None, timeout: float = 300.0, recycle_after: int | None = 200,
                 workdir: str | None = None, *, rerun: bool = True, check_strides: bool = True,
                 start_timeout: float = 180.0, threads: int | None = None, env: dict | None = None, kind=None,
                 similar=None, cache_limit: int | None = None, rerun_cold_hangs: bool = False, note=None):
        self.kind = kind
        self.cold = ColdStart(rerun_cold_hangs, note)  # a hang before any case is answered: judged once more
        # bytes of compile caches (and scratch files) all workers may keep: each its share; one over it
        # is replaced after its case, and its caches emptied (an emptied cache only costs recompiles)
        self.cache_limit = cache_limit
        self.similar = similar  # program dict -> key of programs alike, or None (kind.similar_key)
        self._hung: dict = {}  # key -> the case that hung with it
        # signature keys of findings that held on a rerun: another finding of one is judged once
        self.confirmed: set = set()
        self.devices = list(devices) if devices is not None else None
        if workers is not None and workers < 1:
            raise ValueError("workers must be >= 1")
        # default: one worker per usable CPU; one Inductor compile thread each, OMP on its share of the CPUs
        self.sizing = size_pool(workers, self.devices, workers_per_gpu)
        workers = self.workers = self.sizing.workers
        self.timeout = timeout
        self.recycle_after = recycle_after
        self.start_timeout = start_timeout
        self._rerun, self._check_strides = rerun, check_strides
        self._own_workdir = workdir is None
        self.workdir = os.path.abspath(workdir or tempfile.mkdtemp(prefix="shapefuzz-pool-"))
        os.makedirs(self.workdir, exist_ok=True)
        # the workers' scratch dir (TMPDIR), emptied: what a killed pool left is of no use
        self.tmpdir = pch.fresh_tmpdir(os.path.join(self.workdir, "tmp"))
        self._env = dict(env or {})
        if threads:  # explicit: over the sizing's share and the user's environment
            self._env.setdefault("OMP_NUM_THREADS", str(threads))
            self._env.setdefault("MKL_NUM_THREADS", str(threads))
        for k, v in self.sizing.env.items():
            self._env.setdefault(k, v)
        self._ctx = mp.get_context("spawn")
        self._tokens = itertools.count()
        self._pending: deque = deque()  # (case_id, program dict, timeout, similar key)
        self._done: deque = deque()  # results not yet handed out
        self._start_failures = Counter()
        self.restarts = Counter({"crash": 0, "hang": 0, "cuda": 0, "recycle": 0, "cache": 0})
        self.completed = 0
        self.paused = 0  # the last workers by slot take no new case (their CPUs lent to follow-ups)
        self._closed = False
        self._workers: list[_Worker] = []
        _live_pools.add(self)
        try:
            for slot in range(workers):
                self._workers.append(self._spawn(slot))
        except BaseException:
            self.close()
            raise

    # -- public API -------------------------------------------------------

    def submit(self, case_id, program, timeout: float | None = None) -> None:
        """Queue a case: program is a program of the pool's kind, or its dict. timeout overrides the
        pool's per-case limit (seconds)."""
        if self._closed:
            raise RuntimeError("the pool is closed")
        if not isinstance(program, dict):  # a Program or StepProgram
            program = program.to_dict()
        key = self.similar(program) if self.similar is not None else None
        self._pending.append((case_id, program, self.timeout if timeout is None else timeout, key))
        self._dispatch()

    def results(self, timeout: float | None = None) -> Iterator[tuple]:
        """Yield (case_id, verdict_dict, info) as cases complete, until none is
        queued or running, or no result came within `timeout` seconds."""
        while True:
            while self._done:
                yield self._done.popleft()
            if not self._pending and not self.in_flight:
                return
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self._done:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                self._step(left)

    def run(self, cases: Iterable[tuple], prefetch: int | None = None) -> Iterator[tuple]:
        """imap_unordered: judge (case_id, program) pairs, drawn lazily from
        `cases`, keeping every worker busy; yield results as they complete.
        At most `prefetch` (default: one per worker) cases wait in the queue,
        so that a worker gets its next case the moment it answers."""
        prefetch = self.workers if prefetch is None else max(1, prefetch)
        it = iter(cases)
        exhausted = False
        while True:
            # cases held back behind a running case like them do not count: a worker must find one to take
            while not exhausted and len(self._pending) - self._held() < prefetch and len(self._pending) < 4 * prefetch:
                try:
                    case_id, program = next(it)
                except StopIteration:
                    exhausted = True
                else:
                    self.submit(case_id, program)
            while self._done:
                yield self._done.popleft()
            if exhausted and not self._pending and not self.in_flight:
                return
            self._step(None)

    def collect(self, timeout: float) -> list:
        """Every (case_id, verdict_dict, info) completed so far, after waiting up
        to `timeout` seconds for the first when none is; [] at once when nothing
        is queued or running. (For a caller that submits and collects in turns,
        as a Ray node does: fuzz/campaign/cluster/node.py.)"""
        deadline = time.monotonic() + timeout
        while not self._done and (self._pending or self.in_flight):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._step(left)
        out = list(self._done)
        self._done.clear()
        return out

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until every worker has started (imported torch); True if so.
        Results that complete meanwhile are kept for results()/run()."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not all(w.ready for w in self._workers):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self._step(left)
        return True

    @property
    def in_flight(self) -> int:
        return sum(w.job is not None for w in self._workers)

    def unfinished(self) -> list:
        """Case ids queued or running (e.g. to record for a resume before close)."""
        return [w.job.case_id for w in self._workers if w.job] + [item[0] for item in self._pending]

    def pids(self) -> list[int]:
        return [w.proc.pid for w in self._workers if w.proc.pid]

    def close(self, timeout: float = 5.0) -> None:
        """Stop every worker (politely, then SIGKILL to its process group);
        queued and running cases are dropped. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        for w in self._workers:
            if w.job is None:
                with contextlib.suppress(OSError, ValueError):
                    w.conn.send(None)
        deadline = time.monotonic() + timeout
        for w in self._workers:
            if w.job is None:
                w.proc.join(max(0.0, deadline - time.monotonic()))
            self._kill(w)
        self._workers = []
        _live_pools.discard(self)
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
    # -- workers ------------------------------------------------------------

    def share(self) -> int | None:
        """The bytes of caches one worker may keep (None: no limit)."""
        return None if self.cache_limit is None else max(1, self.cache_limit // max(1, self.workers))

    def _spawn(self, slot: int, empty_caches: bool = False) -> _Worker:
        device = self.devices[slot % len(self.devices)] if self.devices else None
        home = os.path.join(self.workdir, f"w{slot}")
        # everything a worker and its compiler subprocesses write lives under its home: nothing in the
        # shared /tmp/torchinductor_<user>, ~/.triton or /tmp, and a kill leaves nothing outside the state dir
        env = dict(self._env,
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(home, "inductor"),
                   TRITON_CACHE_DIR=os.path.join(home, "triton"),
                   TMPDIR=self.tmpdir)  # shared, its precompiled header path linked to the kept one
        if self.cache_limit is not None:
            env["SHAPEFUZZ_CACHE_SHARE"] = str(self.share())
        if device is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(device)
        if empty_caches:
            for d in (env["TORCHINDUCTOR_CACHE_DIR"], env["TRITON_CACHE_DIR"]):
                shutil.rmtree(d, ignore_errors=True)
        for d in (env["TORCHINDUCTOR_CACHE_DIR"], env["TRITON_CACHE_DIR"], env["TMPDIR"]):  # never through a link
            os.makedirs(confined(self.workdir, os.path.join(d, "_")).parent, exist_ok=True)
        log_path = os.path.join(home, "stderr.log")
        os.close(open_regular(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))  # the last worker's tail is read
        parent_conn, child_conn = self._ctx.Pipe()
        proc = self._ctx.Process(target=_worker_main, name=f"shapefuzz-worker-{slot}",
                                 args=(child_conn, env, log_path, self._rerun, self._check_strides, self.kind))
        with _environ(env):
            proc.start()
        child_conn.close()
        return _Worker(slot=slot, device=device, proc=proc, conn=parent_conn, log_path=log_path,
                       spawned=time.monotonic())

    def _kill(self, w: _Worker) -> None:
        """SIGKILL the worker's process group (it and compiler subprocesses)."""
        with contextlib.suppress(OSError):
            os.killpg(w.proc.pid, signal.SIGKILL)  # fails harmlessly if it has not called setpgid yet
        with contextlib.suppress(OSError):
            w.proc.kill()
        w.proc.join(5)
        w.conn.close()
        with contextlib.suppress(ValueError):  # frees its sentinel fd now, not at garbage collection
            w.proc.close()

    def _replace(self, w: _Worker, cause: str, graceful: bool = False) -> None:
        self.restarts[cause] += 1
        if graceful:
            with contextlib.suppress(OSError, ValueError):
                w.conn.send(None)
                w.proc.join(2)
        self._kill(w)
        if not self._closed:
            self._workers[w.slot] = self._spawn(w.slot, empty_caches=cause == "cache")

    # -- scheduling -----------------------------------------------------------

    def _dispatch(self) -> None:
        self._skip_hung()
        for w in list(self._workers):
            if not self._pending:
                return
            if not w.ready or w.job is not None or w.slot >= self.workers - self.paused:
                continue
            item = self._next_pending()
            if item is None:  # each is like a running case: it waits for that one
                return
            case_id, program, timeout, key = item
            job = _Job(case_id, next(self._tokens), timeout, time.monotonic(), key, program)
            with contextlib.suppress(OSError):
                w.log_offset = os.path.getsize(w.log_path)
            try:
                w.conn.send((job.token, program, frozenset(self.confirmed)))
            except (OSError, ValueError):  # died while idle: requeue, replace
                self._pending.appendleft(item)
                self._replace(w, "lost")
                continue
            job.started = time.monotonic()
            w.job = job

    def _running_keys(self) -> set:
        return {w.job.key for w in self._workers if w.job is not None and w.job.key is not None}

    def _held(self) -> int:
        """Queued cases that wait for a running case like them."""
        running = self._running_keys()
        return sum(item[3] in running for item in self._pending) if running else 0

    def _next_pending(self) -> tuple | None:
        """The first queued case unlike every running one, or None."""
        running = self._running_keys()
        for k, item in enumerate(self._pending):
            if item[3] is None or item[3] not in running:
                del self._pending[k]
                return item
        return None

    def _skip_hung(self) -> None:
        """Queued cases like one that hung: a verdict now, not another worker
        held for the time limit."""
        if not self._hung or not any(item[3] in self._hung for item in self._pending):
            return
        keep = deque()
        for item in self._pending:
            case_id, _, _, key = item
            if key is None or key not in self._hung:
                keep.append(item)
                continue
            self.completed += 1
            v = Verdict(outcome=Outcome.SKIPPED, stage=Stage.PROCESS,
                        message=f"not judged: case {self._hung[key]}, the same program with other dims marked, "
                                f"hung in this campaign")
            self._done.append((case_id, v.to_dict(), dict(worker=None, pid=None, device=None, elapsed=0.0,
                                                          wall=None, error=None, restart=None)))
        self._pending = keep

    def _step(self, timeout: float | None) -> None:
        """Wait for one event (a message, a death, a deadline) or `timeout`,
        handle whatever happened, refill idle workers."""
        if self._closed:
            return
        self._dispatch()
        now = time.monotonic()
        deadlines = [now + timeout] if timeout is not None else []
        waitables = []
        for w in self._workers:
            waitables += [w.conn, w.proc.sentinel]
            if w.job is not None:
                deadlines.append(w.job.started + w.job.timeout)
            elif not w.ready:
                deadlines.append(w.spawned + self.start_timeout)
        _wait(waitables, max(0.0, min(deadlines) - now) if deadlines else None)
        for w in list(self._workers):
            self._service(w)
        self._dispatch()

    def _service(self, w: _Worker) -> None:
        dead = not self._drain(w)
        if self._workers[w.slot] is not w:  # replaced while draining (poisoned, recycled)
            return
        if dead or not w.proc.is_alive():
            self._drain(w)  # what it sent just before dying
            if self._workers[w.slot] is w:
                self._on_death(w)
        elif w.job is not None and time.monotonic() >= w.job.started + w.job.timeout:
            self._on_hang(w)
        elif not w.ready and time.monotonic() >= w.spawned + self.start_timeout:
            self._on_start_failure(w, f"did not start within {self.start_timeout:g} s")

    def _drain(self, w: _Worker) -> bool:
        """Handle every message waiting from w; False if its pipe is closed."""
        try:
            while self._workers[w.slot] is w and w.conn.poll():
                msg = w.conn.recv()
                if msg[0] == "ready":
                    w.ready = True
                    self._start_failures[w.slot] = 0
                elif msg[0] == "result":
                    self._on_result(w, *msg[1:])
        except (EOFError, OSError):
            return False
        return True

    def _on_result(self, w: _Worker, token: int, verdict: dict, wall: float, error: str | None,
                   extra: dict | None = None) -> None:
        job = w.job
        if job is None or token != job.token:
            return  # stale: cannot happen with one case in flight per worker
        w.job = None
        w.cases += 1
        self.cold.answered += 1
        extra = extra or {}
        cause = replace_cause(verdict) or extra.get("restart")
        if cause is None and self.recycle_after and w.cases >= self.recycle_after:
            cause = "recycle"
        share = self.share()
        if cause is None and share is not None and extra.get("cache_bytes", 0) > share:
            cause = "cache"
        more = {"program": extra["program"]} if extra.get("program") else {}
        if isinstance(extra.get("coverage"), list):
            more["coverage"] = extra["coverage"]
        self._complete(w, job, verdict, wall=wall, error=error, restart=cause, **more)
        if cause:
            self._replace(w, cause, graceful=cause == "recycle")

    def _complete(self, w: _Worker, job: _Job, verdict: dict, **info) -> None:
        self.completed += 1
        info = dict(worker=w.slot, pid=w.proc.pid, device=w.device, elapsed=time.monotonic() - job.started, **info)
        self._done.append((job.case_id, verdict, info))

    def _on_death(self, w: _Worker) -> None:
        w.proc.join(1)
        code = w.proc.exitcode
        if code is not None and code < 0:
            name = signal_name(-code)
            head = f"worker killed by signal {-code} ({name})"
            if -code == signal.SIGKILL:
                head += "\n(SIGKILL from outside: most likely the kernel's OOM killer)"
        else:
            name = "WorkerExit"
            head = f"worker exited with status {code}"
        if w.job is not None:
            tail, frames = self._read_log(w)
            v = Verdict(outcome=Outcome.CRASH, stage=Stage.PROCESS, exc_type=name, frames=frames,
                        message=with_tail(head, tail),
                        seconds=time.monotonic() - w.job.started)
            job, w.job = w.job, None
            self._complete(w, job, v.to_dict(), wall=None, error=None, restart="crash")
            self._replace(w, "crash")
        elif not w.ready:
            self._on_start_failure(w, head)
        else:
            self._replace(w, "lost")  # died between cases

    def _on_hang(self, w: _Worker) -> None:
        with contextlib.suppress(OSError):
            os.kill(w.proc.pid, signal.SIGUSR1)  # faulthandler: dump every thread's stack to the log
        w.proc.join(_HANG_DUMP_WAIT)  # (it will not exit; this is a sleep that ends early if it dies)
        tail, frames = self._read_log(w)
        job, w.job = w.job, None
        if self.cold.rerun(job, self.workers, self._pending):  # fuzz/campaign/cold_start.py
            return self._replace(w, "cold-hang")
        if job.key is not None:
            self._hung.setdefault(job.key, job.case_id)
        v = Verdict(outcome=Outcome.HANG, stage=Stage.PROCESS, frames=frames, seconds=time.monotonic() - job.started,
                    message=with_tail(f"no verdict within the time limit ({job.timeout:g} s); worker killed", tail))
        self._complete(w, job, v.to_dict(), wall=None, error=None, restart="hang")
        self._replace(w, "hang")

    def _on_start_failure(self, w: _Worker, why: str) -> None:
        tail, _ = self._read_log(w, since_case=False)
        self._start_failures[w.slot] += 1
        if self._start_failures[w.slot] >= 3:
            self.close()
            raise WorkerStartError(f"worker {w.slot} failed to start 3 times; last: {why}\n{tail}")
        self._replace(w, "start")

    def _read_log(self, w: _Worker, since_case: bool = True) -> tuple[str, list]:
        """The last TAIL_LINES lines the worker wrote since its case began, and
        the Python frames of its main thread if faulthandler dumped them."""
        try:
            with open(w.log_path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(w.log_offset if since_case else 0, size - _TAIL_BYTES))
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "", []
        frames, rest = faulthandler_frames(lines)
        return "\n".join(rest[-TAIL_LINES:]), frames


@atexit.register
def _close_all() -> None:
    """Runs before multiprocessing's own exit handler, which would otherwise
    wait forever for workers that wait for work."""
    for pool in list(_live_pools):
        pool.close(timeout=1.0)
