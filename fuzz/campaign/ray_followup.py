"""Follow-up jobs (fuzz/campaign/followup.py) computed on a Ray cluster, for
`shapefuzz run --ray` and `shapefuzz followup --ray`.

The corpus lives on the driver's disk, which the nodes do not share. So a
job is split where the work is: the entry's files are shipped to a Ray task
on whichever node has a CPU free, which computes on a private copy -- the
shrink (with the known minimal forms to settle onto, read on the driver), the
triage's ablation, the sanitizer run -- and sends back what it found; the
runner on the driver writes it into the corpus (Corpus.update_shrunk, then
the re-key and merge of fuzz/findings/dedupe.py; ablation.json;
sanitizer.txt). Several jobs run at once, one task each (up to the cluster's
CPUs); their corpus writes are serialized by the runner.

A task whose node is lost is retried by Ray on another node (TASK_RETRIES);
a job past its timeout is cancelled and failed, as the local runner's
supervisor does.

Imports Ray only in functions.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

TASK_RETRIES = 2  # a task's node lost: Ray runs it again elsewhere, this many times


def ship(entry_dir) -> dict:
    """The files an entry's follow-ups read (the top level; not variants/), name -> bytes."""
    d = Path(entry_dir)
    return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.name.startswith(".")}


def compute(job_type: str, name: str, files: dict, params: dict, forms: list | None = None):
    """On a node: do the work of one job on a private copy of the entry; returns what the
    runner writes back (a ShrinkResult, an ablation document, a sanitizer report or None),
    with the node's id (its first 6 digits, as the campaign names nodes)."""
    import ray

    node = ray.get_runtime_context().get_node_id()[:6]
    return node, _compute(job_type, name, files, params, forms)


def _compute(job_type: str, name: str, files: dict, params: dict, forms: list | None):
    root = tempfile.mkdtemp(prefix="shapefuzz-followup-")
    try:
        entry = Path(root) / name
        entry.mkdir()
        for fname, data in files.items():
            (entry / fname).write_bytes(data)
        if job_type == "shrink":
            from fuzz.findings.corpus import Corpus
            from fuzz.kinds import kind_of

            program = Corpus(root).load(entry).program
            return kind_of(program).shrink_entry(entry, time_budget=float(params.get("budget", 300.0)),
                                                 reruns=params.get("reruns", 3), write=False,
                                                 timeout=float(params.get("timeout", 300.0)), onto=forms)
        if job_type == "triage":
            from fuzz.findings.triage import triage_entry

            return triage_entry(entry, timeout=float(params.get("timeout", 300.0)))
        if job_type == "sanitize":
            from fuzz.findings.sanitizer import sanitize_entry

            return sanitize_entry(str(entry), timeout=float(params["sanitizer_timeout"]))
        raise ValueError(f"unknown job type {job_type!r}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


class Remote:
    """The runner's handle on the cluster: runs a job's compute() as a task and waits for it
    with the runner's lock released, so that other jobs' corpus writes go on meanwhile."""

    where = "on the cluster"

    def __init__(self, address: str, log=print):
        self.log = log
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import logging

        import ray

        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False, namespace="shapefuzz")
        self._ray = ray
        # a shrink or triage judges one case at a time: one CPU (and a CUDA entry's one GPU, shared with the workers)
        self._task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(compute)
        self.lock = threading.Lock()  # held by the runner's threads except while a task runs

    def slots(self, pending: int = 0, draining: bool = True) -> int:
        """Jobs to run at once: the cluster's CPUs."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def run(self, job_type: str, entry_dir, params: dict, timeout: float, forms: list | None = None,
            gpu: bool = False):
        """compute() as a task (called with the lock held; released while it runs)."""
        name = Path(entry_dir).name
        ref = self._task.options(num_gpus=1 if gpu else 0).remote(job_type, name, ship(entry_dir), params, forms)
        self.lock.release()
        try:
            ready, _ = self._ray.wait([ref], timeout=timeout)
            if not ready:
                self._ray.cancel(ref, force=True)
                raise TimeoutError(f"timed out after {timeout:.0f} s (on the cluster)")
            node, result = self._ray.get(ref)
        finally:
            self.lock.acquire()
        self.log(f"    {job_type} of {name} computed on node {node}")
        return result

    def shrinker(self, job_timeout: float, gpu: bool = False):
        """A kind.shrink_entry for fuzz.findings.dedupe.settle that shrinks on the cluster and
        writes the result here."""
        def shrink_entry(entry_dir, *, time_budget, reruns, write, timeout, onto=None, **_):
            params = {"budget": time_budget, "reruns": reruns, "timeout": timeout}
            res = self.run("shrink", entry_dir, params, job_timeout, onto, gpu=gpu)
            if write and res.reproduced and res.verdict is not None:
                from fuzz.findings.corpus import Corpus

                Corpus(Path(entry_dir).parent).update_shrunk(entry_dir, res.program, res.verdict, res.stats())
            return res

        return shrink_entry

    def close(self) -> None:
        self._ray.shutdown()



def run_parallel(jobs, remote: Remote, *, linger: float, max_jobs: int, log, run_job, max_starts: int,
                 order: dict, told_to_drain) -> int:
    """The runner's loop with a cluster (fuzz/campaign/followup.py run_pending): up to
    remote.slots() jobs at once, each in a thread that holds remote.lock except while its
    task runs, so that the job log and the corpus are written by one thread at a time.
    A job waits while another job of its entry runs, and a triage (or any later type) while
    its entry's shrink is pending. Returns how many jobs ran: once `max_jobs` have ended, at the first
    moment none runs (a fresh runner takes over). Reaching it never stops the dispatch while jobs run:
    that left a 26-minute soak's queue of 68 jobs waiting 500 s behind a hang's triage, its last minutes
    and its wind-down with nothing shrunk (the jobs compute in processes of their own, so the runner's
    memory does not grow with them)."""
    running: dict[str, threading.Thread] = {}
    corpora: dict = {}

    def target(job) -> str:
        """The entry a job works on now (a merged entry is shared by the jobs of every key it absorbed)."""
        from fuzz.findings.corpus import Corpus

        root = job.params.get("corpus")
        if root is None:
            return job.entry
        path = corpora.setdefault(root, Corpus(root)).resolve(job.entry)
        return path.name if path is not None else job.entry
    ran, idle_since, draining = 0, time.monotonic(), linger <= 0

    def work(job, attempt: int) -> None:
        from fuzz.judge.isolated import lock_given_up_while_waiting

        # the lock is given up while the job computes (remote.run) or waits for a child process
        with remote.lock, lock_given_up_while_waiting(remote.lock):
            log(f"--- {job.id} ({remote.where})" + (f" (attempt {attempt}: the last one never finished)"
                                                     if attempt > 1 else ""))
            from fuzz import cputime

            with cputime.metered(in_process=False) as cpu:  # the job's process and its checks' (by this thread)
                try:
                    event, detail = run_job(job, remote)
                except Exception as e:  # noqa: BLE001 - one job must not stop the others
                    event, detail = "failed", f"{type(e).__name__}: {e}"
            log(f"    {job.id} {event}: {detail}")
            jobs.append(job.id, event, detail=detail[:1000], cpu=cpu)

    remote.lock.acquire()
    try:
        while True:
            for jid in [j for j, t in running.items() if not t.is_alive()]:
                del running[jid]
                ran += 1
                idle_since = time.monotonic()
            if ran >= max_jobs and not running:
                return ran
            pending = [j for j in jobs.refresh().pending() if j.id not in running]
            if not draining:  # the campaign's cases ended: every slot for the rest
                draining = told_to_drain(0)
            slots = remote.slots(len(pending) + len(running), draining)
            busy = {target(jobs.jobs[j]) for j in running}
            for job in pending:
                if len(running) >= slots:
                    break
                first = order.get(job.type, 1)
                if target(job) in busy or any(p.entry == job.entry and order.get(p.type, 1) < first for p in pending):
                    continue
                if job.unfinished_starts >= max_starts:
                    jobs.append(job.id, "failed",
                                detail=f"started {job.starts} times and never finished (runner killed)")
                    continue
                attempt = job.unfinished_starts + 1
                # logged here, not in the thread: the log's order is the order of dispatch
                jobs.append(job.id, "started", pid=os.getpid(), attempt=attempt)
                t = threading.Thread(target=work, args=(job, attempt), daemon=True, name=f"followup-{job.id}")
                running[job.id] = t
                busy.add(target(job))
                t.start()
            if not running:
                if not pending:
                    if draining or time.monotonic() - idle_since > linger:
                        return ran
                    remote.lock.release()
                    try:
                        draining = told_to_drain(0.5)
                    finally:
                        remote.lock.acquire()
                    continue
            remote.lock.release()  # the job threads write meanwhile
            try:
                time.sleep(0.2)
            finally:
                remote.lock.acquire()
    finally:
        remote.lock.release()
