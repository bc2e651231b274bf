"""The follow-up scheduler: which pending job runs next, and how many at once, whatever computes them --
a Ray cluster (fuzz/campaign/cluster/followups.py Remote) or processes of this machine
(fuzz/campaign/followups/local.py LocalRemote). Both offer the same remote: `where`, `lock`,
`slots(pending, draining)` and what run_job calls on it; the scheduling is this one.

Rules: up to remote.slots() jobs at once, each in a thread that holds remote.lock except while its
job computes, so that the job log and the corpus are written by one thread at a time. A job waits while
another job of its entry runs, and a triage (or any later type) while its entry's shrink is pending.
"""

from __future__ import annotations

import os
import threading
import time


def run_parallel(jobs, remote, *, linger: float, max_jobs: int, log, run_job, max_starts: int,
                 order: dict, told_to_drain) -> int:
    """The runner's loop (fuzz/campaign/followups/runner.py run_pending). Returns how many jobs ran: once
    `max_jobs` have ended, at the first moment none runs (a fresh runner takes over). Reaching it never
    stops the dispatch while jobs run: that left a 26-minute soak's queue of 68 jobs waiting 500 s behind a
    hang's triage, its last minutes and its wind-down with nothing shrunk (the jobs compute in processes of
    their own, so the runner's memory does not grow with them)."""
    return Scheduler(jobs, remote, linger=linger, max_jobs=max_jobs, log=log, run_job=run_job,
                     max_starts=max_starts, order=order, told_to_drain=told_to_drain).run()


def start(jobs, job, max_starts: int) -> int | None:
    """Log `job` started and return its attempt (1, or 2 after a runner killed mid-job); or, started
    `max_starts` times and never finished, log it failed and return None."""
    if job.unfinished_starts >= max_starts:
        jobs.append(job.id, "failed", detail=f"started {job.starts} times and never finished (runner killed)")
        return None
    attempt = job.unfinished_starts + 1
    jobs.append(job.id, "started", pid=os.getpid(), attempt=attempt)
    return attempt


class Scheduler:
    def __init__(self, jobs, remote, *, linger: float, max_jobs: int, log, run_job, max_starts: int,
                 order: dict, told_to_drain):
        self.jobs, self.remote, self.linger, self.max_jobs, self.log = jobs, remote, linger, max_jobs, log
        self.run_job, self.max_starts, self.order, self.told_to_drain = run_job, max_starts, order, told_to_drain
        self.running: dict[str, threading.Thread] = {}
        self._corpora: dict = {}
        self.ran, self.idle_since, self.draining = 0, time.monotonic(), linger <= 0

    def run(self) -> int:
        lock = self.remote.lock
        lock.acquire()
        try:
            while True:
                self._reap()
                if self.ran >= self.max_jobs and not self.running:
                    return self.ran
                pending = [j for j in self.jobs.refresh().pending() if j.id not in self.running]
                if not self.draining:  # the campaign's cases ended: every slot for the rest
                    self.draining = self.told_to_drain(0)
                self._dispatch(pending)
                if not self.running and not pending:
                    if self.draining or time.monotonic() - self.idle_since > self.linger:
                        return self.ran
                    self.draining = self._unlocked(self.told_to_drain, 0.5)
                    continue
                self._unlocked(time.sleep, 0.2)  # the job threads write meanwhile
        finally:
            lock.release()

    def _unlocked(self, wait, seconds: float):
        self.remote.lock.release()
        try:
            return wait(seconds)
        finally:
            self.remote.lock.acquire()

    def _reap(self) -> None:
        for jid in [j for j, t in self.running.items() if not t.is_alive()]:
            del self.running[jid]
            self.ran += 1
            self.idle_since = time.monotonic()

    def _target(self, job) -> str:
        """The entry a job works on now (a merged entry is shared by the jobs of every key it absorbed)."""
        from fuzz.findings.store.corpus import Corpus

        root = job.corpus  # the runner's corpus, never one the log names
        if root is None:
            return job.entry
        path = self._corpora.setdefault(root, Corpus(root)).resolve(job.entry)
        return path.name if path is not None else job.entry

    def _dispatch(self, pending: list) -> None:
        """Start the pending jobs that may run now, in order, while slots are free."""
        jobs, order = self.jobs, self.order
        slots = self.remote.slots(len(pending) + len(self.running), self.draining)
        busy = {self._target(jobs.jobs[j]) for j in self.running}
        for job in pending:
            if len(self.running) >= slots:
                break
            first = order.get(job.type, 1)
            if self._target(job) in busy or any(p.entry == job.entry and order.get(p.type, 1) < first
                                                for p in pending):
                continue
            attempt = start(jobs, job, self.max_starts)  # here, not in the thread: the log's order is the dispatch's
            if attempt is None:
                continue
            t = threading.Thread(target=self._work, args=(job, attempt), daemon=True, name=f"followup-{job.id}")
            self.running[job.id] = t
            busy.add(self._target(job))
            t.start()

    def _work(self, job, attempt: int) -> None:
        from fuzz import cputime
        from fuzz.judge.isolated import lock_given_up_while_waiting

        remote, log = self.remote, self.log
        # the lock is given up while the job computes (remote.run) or waits for a child process
        with remote.lock, lock_given_up_while_waiting(remote.lock):
            log(f"--- {job.id} ({remote.where})" + (f" (attempt {attempt}: the last one never finished)"
                                                     if attempt > 1 else ""))
            with cputime.metered(in_process=False) as cpu:  # the job's process and its checks' (by this thread)
                try:
                    event, detail = self.run_job(job, remote)
                except Exception as e:  # noqa: BLE001 - one job must not stop the others
                    event, detail = "failed", f"{type(e).__name__}: {e}"
            log(f"    {job.id} {event}: {detail}")
            self.jobs.append(job.id, event, detail=detail[:1000], cpu=cpu)
