"""Follow-up jobs computed in several local processes at once: the drain of a
campaign's follow-ups (`shapefuzz followup STATE`, or a campaign whose cases
are done) uses the machine's CPUs, not one runner's. A 20-minute campaign on
a 16-CPU GPU box left 64 jobs pending for one runner, hours of work.

The scheduling is the cluster's (fuzz/campaign/followups/schedule.py:
a job waits while another job of its entry runs, a triage while its entry's
shrink is pending, and every corpus write is made by the runner, one at a
time); only where a job computes differs. Each job runs in a spawned process
of its own session, on a private copy of the entry, and is killed with
everything it started (sandbox workers) past its timeout.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from fuzz import cputime
from fuzz.campaign.lifeline import exit_with_parent
from fuzz.campaign.cluster.followups import Remote, _compute, ship
from fuzz.campaign.sizing import COMPILE_THREADS, OMP_THREADS, usable_cpus
from fuzz.judge import warm_kernels

def job_env(home: str, base: dict) -> dict:
    """A job's caches and scratch dir under `home` (gone with the job). Its precompiled C++ header is the
    machine's kept one (fuzz/pch.py, linked in): made once, not once a job or a runner (150 MB and, on a
    loaded machine, minutes of compiling: a triage's inductor row, a shrink of an Inductor finding)."""
    from fuzz import pch

    env = dict(base, TORCHINDUCTOR_CACHE_DIR=os.path.join(home, "inductor"),
               TRITON_CACHE_DIR=os.path.join(home, "triton"), TMPDIR=os.path.join(home, "tmp"))
    os.makedirs(env["TMPDIR"])
    pch.link(env["TMPDIR"])  # rmtree(home) removes the link, not the header
    return env


PENDING_PER_SLOT = 2  # beside the cases: one more job at once for every this many waiting
PARALLEL_FROM = 8  # CPUs: under this, one job at a time beside the cases, in the runner itself
# beside the cases, follow-ups take at most 1/N of the CPUs (N = 2 unless this says another N >= 1): a
# knob to measure a smaller share with, not a tuning the user needs
SHARE_ENV = "SHAPEFUZZ_FOLLOWUP_SHARE"
NO_ZYGOTE_ENV = "SHAPEFUZZ_NO_ZYGOTE"  # 1: every standalone check in a fresh process (to measure what the zygote saves)


def _share_divisor() -> int:
    try:
        return max(1, int(os.environ.get(SHARE_ENV, "2")))
    except ValueError:
        return 2


# a job run in the runner's zygote (LocalRemote._run_in_zygote): its arguments and its answer as files beside it
_JOB_SCRIPT = """from fuzz.campaign.followups.local import job_in_zygote

if __name__ == "__main__":  # not again in a process a sandboxed shrink spawns
    job_in_zygote()
"""


def job_in_zygote() -> None:
    import pickle

    job_type, name, files, params, forms = pickle.loads(Path("args.pickle").read_bytes())
    try:
        result = (True, _compute(job_type, name, files, params, forms))
    except BaseException as e:  # noqa: BLE001 - reported to the runner as the job's failure
        result = (False, f"{type(e).__name__}: {e}")
    Path("result.pickle.tmp").write_bytes(pickle.dumps(result))
    os.replace("result.pickle.tmp", "result.pickle")


def _child(conn, env: dict, job_type: str, name: str, files: dict, params: dict, forms) -> None:
    os.setpgrp()  # its own group: killed with its sandbox workers at a timeout
    # ... and with them when the runner dies (its own group kill no longer reaches here)
    exit_with_parent(0.5, "shapefuzz-followup-job-watch")
    os.environ.update(env)
    try:
        result = (True, _compute(job_type, name, files, params, forms))
    except BaseException as e:  # noqa: BLE001 - reported to the runner as the job's failure
        result = (False, f"{type(e).__name__}: {e}")
    conn.send(result + (cputime.process_tree(),))  # its sandbox workers were waited for: counted
    conn.close()


def share_beside_cases(slots: int, pending: int) -> int:
    """Follow-up jobs at once beside a campaign's cases: one per PENDING_PER_SLOT
    jobs waiting, up to half the slots (under PARALLEL_FROM, one). A quarter
    left 69% of a 4-minute H200 campaign's entries unshrunk at its end (with
    every shrink under the entry's own backend; SHARE_ENV measures it again)."""
    if slots < PARALLEL_FROM:
        return 1
    return max(1, min(slots // _share_divisor(), -(-pending // PENDING_PER_SLOT)))


def workers_to_pause(workers: int, cpus: int, running: int) -> int:
    """Campaign workers that take no case while `running` follow-up jobs run:
    those whose CPUs the jobs (and their runner) would otherwise oversubscribe,
    at most half. None where follow-ups run one at a time. Counted from the
    jobs running, not the share they may have: on a 4-GPU box a share of 32
    paused 32 workers while 5 to 14 jobs ran, and the load stayed near 35 of 64."""
    if cpus < PARALLEL_FROM or running <= 0:
        return 0
    return max(0, min(workers // 2, workers + running + 1 - cpus))


class LocalRemote:
    """The scheduler's remote for this machine: `slots` jobs at once (default: the usable CPUs)."""

    where = "in a process of its own"

    def __init__(self, slots: int | None = None, log=print, beside_cases: bool = False):
        self._slots = max(1, slots or usable_cpus())
        # beside a campaign's cases, the follow-ups' share of the CPUs grows with the queue (slots())
        self.beside_cases = beside_cases
        self.log = log
        self.lock = threading.Lock()  # held by the runner's threads except while a job computes
        # as the campaign's workers: one compile thread each, the CPUs' OMP threads shared (unless set by the user)
        self._env = {} if COMPILE_THREADS in os.environ else {COMPILE_THREADS: "1"}
        self._env.update({n: str(max(1, usable_cpus() // self._slots)) for n in OMP_THREADS if n not in os.environ})
        self._ctx = mp.get_context("spawn")
        # the jobs' homes: beside the runner's caches (STATE/followup-cache, which a new runner empties)
        base = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        self._homes = os.path.join(os.path.dirname(base), "jobs") if base else None  # None: TMPDIR
        self._kept = threading.local()  # a shrink's home, kept for its standalone checks (checks_reuse_kernels)
        self._zygote_started = self._zygote_told = False

    def slots(self, pending: int = 0, draining: bool = True) -> int:
        """Jobs at once: all the slots once the cases are done, else share_beside_cases."""
        if draining or not self.beside_cases:
            return self._slots
        return share_beside_cases(self._slots, pending)

    def run(self, job_type: str, entry_dir, params: dict, timeout: float, forms: list | None = None,
            gpu: bool = False):
        """_compute() in a process of its own (called with the lock held; released while it runs)."""
        name = Path(entry_dir).name
        # caches and scratch of its own, gone with the job: the follow-ups' disk is bounded by the jobs at once
        if self._homes:
            os.makedirs(self._homes, exist_ok=True)
        home = tempfile.mkdtemp(prefix=f"{job_type}-{name}-", dir=self._homes)
        env = job_env(home, self._env)
        self._start_zygote()
        try:
            done = self._run_in_zygote(home, env, (job_type, name, ship(entry_dir), params, forms), timeout)
        except BaseException:
            self._done_with(home, env, job_type)
            raise
        if done is not None:
            self._done_with(home, env, job_type)
            ok, value = done
            if not ok:
                raise RuntimeError(value)
            return value
        recv, send = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(target=_child, args=(send, env, job_type, name, ship(entry_dir), params,
                                                      forms), name=f"shapefuzz-followup-{name}")
        proc.start()
        send.close()
        self.lock.release()
        try:
            if not recv.poll(timeout):
                raise TimeoutError(f"timed out after {timeout:.0f} s")
            try:
                ok, value, cpu = recv.recv()
                cputime.add("compute", cpu)
            except EOFError:
                raise RuntimeError(f"its process died ({_exit_text(proc)})") from None
        finally:
            if proc.is_alive():
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    proc.kill()
            proc.join()
            recv.close()
            self._done_with(home, env, job_type)
            self.lock.acquire()
        if not ok:
            raise RuntimeError(value)
        return value

    def _done_with(self, home: str, env: dict, job_type: str) -> None:
        kept = getattr(self._kept, "homes", None)
        if kept is not None and job_type == "shrink" and warm_kernels.add(env["TORCHINDUCTOR_CACHE_DIR"],
                                                                          env["TRITON_CACHE_DIR"]):
            kept.append(home)  # removed once the checks are done
        else:
            shutil.rmtree(home, ignore_errors=True)

    def _run_in_zygote(self, home: str, env: dict, args: tuple, timeout: float) -> tuple | None:
        """The job in a child of this runner's zygote, where it is up and takes the job's environment: (ok,
        value) as _child sends them; None where it did not run there (a spawned process runs it then)."""
        import pickle

        from fuzz.judge import zygote

        if not zygote.expected():
            return None
        job = Path(home) / "job"
        job.mkdir()
        (job / "args.pickle").write_bytes(pickle.dumps(args))
        (job / "job.py").write_text(_JOB_SCRIPT)
        self.lock.release()
        try:
            got = zygote.run(str(job / "job.py"), cwd=str(job), env={**os.environ, **env}, timeout=timeout)
        finally:
            self.lock.acquire()
        if got is None:
            return None
        if not self._zygote_told:
            self._zygote_told = True
            self.log("(from here on, jobs and their standalone checks fork from a zygote that imported torch once: "
                     f"{zygote.__name__}; {NO_ZYGOTE_ENV}=1 turns it off)")
        rc, out, err, cpu = got
        cputime.add("compute", cpu)
        if rc is None:
            raise TimeoutError(f"timed out after {timeout:.0f} s")
        try:
            return pickle.loads((job / "result.pickle").read_bytes())  # the runner's own file: trusted
        except (OSError, EOFError, pickle.UnpicklingError):
            tail = " / ".join(err.strip().splitlines()[-3:])[:300]
            raise RuntimeError(f"its process died (exit {rc}{': ' + tail if tail else ''})") from None

    shrinker = Remote.shrinker  # ships the shrink here and writes its result into the corpus, as on a cluster

    def _start_zygote(self) -> None:
        """Once, in the background: a zygote (fuzz/judge/zygote.py) for this runner's standalone checks, which
        then skip the 15 CPU-seconds of importing torch, Dynamo and Inductor that a fresh process pays on a GPU
        box. Jobs and checks asked for while it starts wait for it (zygote.START_WAIT); where it does not come
        up they run in fresh processes, as every one does with SHAPEFUZZ_NO_ZYGOTE=1."""
        if self._zygote_started or os.environ.get(NO_ZYGOTE_ENV) == "1":
            return
        self._zygote_started = True
        from fuzz.judge import zygote

        if zygote.expected():  # one named by the process that started this one (a test session's): it serves
            return  # here too, and a script whose environment it cannot take runs in a fresh process

        # the environment of its jobs and of the checks (checks_reuse_kernels), less what differs in LAZY
        zygote.start_in_background({**os.environ, **self._env})

    @contextlib.contextmanager
    def checks_reuse_kernels(self):
        """While the block runs (a shrink job's settle, in this thread), a shrink computed here keeps its
        caches until the block ends, and the standalone checks start from its kernels (warm_kernels.py)."""
        from fuzz.judge.isolated import checks_env

        self._start_zygote()
        self._kept.homes = []
        try:
            with warm_kernels.reusing(), checks_env(self._env):
                yield
        finally:
            for home in self._kept.homes:
                shutil.rmtree(home, ignore_errors=True)
            self._kept.homes = None

    def close(self) -> None:
        pass


def _exit_text(proc) -> str:
    proc.join(1)
    code = proc.exitcode
    if code is not None and code < 0:
        return f"signal {signal.Signals(-code).name}"
    return f"exit {code}"
