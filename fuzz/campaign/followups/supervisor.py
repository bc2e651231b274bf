"""The supervisor of a campaign's follow-up jobs (in the campaign, or `shapefuzz followup`): it queues jobs in
the job log and keeps one runner (runner.py) on them, within their timeouts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from fuzz.campaign.followups.runner import BUSY, LINGER, TIMEOUT_GRACE, Job, JobLog, run_pending


class FollowUps:
    """Queues jobs and keeps one runner process on them, within their timeouts."""

    # Where the runner runs. By default a process of its own, beside the cases: a job that crashes or hangs
    # takes the runner with it, never the campaign. With runs_here, this process runs the jobs once the
    # cases are done (finish() without a time limit; never beside the cases: torch does not compile in two
    # threads of one process at once): a campaign run in a test's process then pays no runner process's start
    # and torch import. The test suite sets it (tests/conftest.py); a campaign started as a command never does.
    runs_here = False

    def __init__(self, state_dir: str, corpus: str | None = None, ray: str | None = None, env: dict | None = None):
        from fuzz.campaign.disk import followup_env
        from fuzz.campaign.state_files import default_corpus, no_symlinked_dirs

        no_symlinked_dirs(state_dir)  # before its caches and log are made there
        self.state_dir = state_dir
        self.corpus = os.path.abspath(corpus or default_corpus(state_dir))  # the runner is told it
        # the runner's caches and scratch dir under the state dir (disk.py), and its share of the cache limit
        self.env = env if env is not None else followup_env(state_dir, None)
        self.ray = ray  # a Ray cluster's address: the runner computes the jobs there (and enforces their timeouts)
        self.log = JobLog(state_dir).refresh()
        self.log_path = os.path.join(state_dir, "followup.log")
        self.proc: subprocess.Popen | None = None
        self.here = False  # the jobs are being run in this process now (runs_here)
        self.draining = False
        self._next_spawn = 0.0

    def queue(self, entry: str, types, params: dict) -> None:
        if types:
            self.log.queue(entry, types, params)
            self.poll()

    def known(self, entry: str) -> bool:
        return self.log.known(entry)

    def counts(self) -> dict:
        return self.log.refresh().counts()

    @property
    def pending(self) -> int:
        return self.counts()["pending"]

    def _jobs_of(self, pid: int | None) -> list[Job]:
        """The jobs runner `pid` is running, as last read (a runner killed earlier left its jobs "started")."""
        return [j for j in self.log.jobs.values() if j.state == "running" and j.pid == pid] if pid else []

    def running(self) -> int:
        """Jobs the current runner is running."""
        return len(self._jobs_of(self.proc.pid if self.proc is not None else None))

    def _running(self) -> Job | None:
        return next(iter(self._jobs_of(self.proc.pid if self.proc is not None else None)), None)

    def poll(self) -> None:
        """Reap a runner that ended, fail a job past its timeout, start a runner when work waits."""
        self.log.refresh()
        if self.proc is not None and self.proc.poll() is not None:
            if self.proc.returncode == BUSY:  # another runner (another supervisor) has them: look again later
                self._next_spawn = time.monotonic() + 10.0
            self.proc = None
        if self.proc is not None and self.ray is None:
            job = self._running()
            # past the job's own limit and a grace: a runner with several jobs at once times them out itself
            if job is not None and time.time() - job.started_at > job.timeout() + TIMEOUT_GRACE:
                self._kill()
                self.log.append(job.id, "failed", detail=f"timed out after {job.timeout():.0f} s")
        if self.proc is None and not self._here_later() and self.log.pending() and time.monotonic() >= self._next_spawn:
            self._spawn()

    def _here_later(self) -> bool:
        """Whether the jobs wait for finish() to run them in this process (runs_here; a Ray runner never does)."""
        return self.runs_here and self.ray is None

    def _open_log(self):
        """The runner's log (followup.log), for appending: a regular file only."""
        from fuzz.files import open_regular

        return os.fdopen(open_regular(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a")

    def _spawn(self) -> None:
        self._next_spawn = time.monotonic() + 1.0
        with self._open_log() as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "fuzz.campaign.followups.runner", self.state_dir, "--corpus", self.corpus]
                + ([] if self.draining else ["--linger", str(LINGER)]) + (["--ray", self.ray] if self.ray else []),
                stdin=subprocess.DEVNULL if self.draining else subprocess.PIPE, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **self.env})

    def _kill(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
            self.proc = None

    def drain(self) -> None:
        """From now on the runner runs jobs on every slot, and exits once none is pending."""
        self.draining = True
        if self.proc is not None and self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()  # the runner finishes what is pending, then exits

    def finish(self, note=None, every: float = 30.0, until: float | None = None) -> dict:
        """Run every pending job (each within its timeout), or those that finish
        before the time.monotonic() deadline `until` (then stop() the rest); returns the counts."""
        self.drain()
        if until is not None:
            self.runs_here = False  # a deadline is the runner process's to keep: it can be stopped at any time
        elif self._here_later() and self.proc is None:
            return self._finish_here()
        last = 0.0
        while True:
            if until is not None and time.monotonic() >= until:  # before poll(), which may start a runner
                self.stop()
                return self.log.refresh().counts()
            self.poll()
            c = self.log.counts()
            if not c["pending"] and self.proc is None:
                return c
            if note and c["pending"] and time.monotonic() - last >= every:
                last = time.monotonic()
                job = self._running()
                note(f"follow-ups: {c['pending']} pending, {c['done']} done, {c['failed']} failed"
                     + (f"; running {job.id}" if job else "") + f" (log {self.log_path})")
            if self.proc is not None:
                try:
                    self.proc.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    pass
            else:
                time.sleep(0.5)

    def _finish_here(self) -> dict:
        """finish() with the runner's loop in this process, its lines in the runner's log."""
        self.here = True  # until it returns: a Ctrl-C's stop() then puts the job running here back in the queue
        with self._open_log() as out:
            def log(line: str) -> None:
                out.write(line + "\n")
                out.flush()

            while self.log.refresh().pending():
                if not run_pending(self.state_dir, self.corpus, log=log, told_to_drain=lambda timeout: True):
                    break  # another runner holds the state dir, or nothing could start
        self.here = False
        return self.log.refresh().counts()

    def stop(self) -> None:
        """Stop the runner now (Ctrl-C, or leaving the rest for later): its job goes back to the queue."""
        pid = os.getpid() if self.here else self.proc.pid if self.proc is not None else None
        self.here = False
        self._kill()  # first: a job it starts while we read the log would be left "started" (a crash, to the log)
        self.log.refresh()
        for job in self._jobs_of(pid):  # one, or with a Ray cluster several
            self.log.append(job.id, "aborted")
