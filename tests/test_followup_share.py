"""Follow-ups keep pace (fuzz/campaign/followups/local.py): beside a campaign's
cases the jobs' share of the CPUs grows with the queue; once the cases end,
or in a drain, every slot runs a job."""

import os

from fuzz.campaign.followups.local import PENDING_PER_SLOT, LocalRemote, workers_to_pause


def test_beside_the_cases_the_followups_share_grows_with_the_queue_up_to_half():
    r = LocalRemote(16, beside_cases=True)
    assert [r.slots(n, draining=False) for n in (0, 1, PENDING_PER_SLOT, PENDING_PER_SLOT + 1)] == [1, 1, 1, 2]
    assert r.slots(3 * PENDING_PER_SLOT, draining=False) == 3
    assert r.slots(1000, draining=False) == 8  # the workers keep half the CPUs
    assert r.slots(1000, draining=True) == 16  # the cases are done: all of them


def test_the_share_beside_the_cases_can_be_set_for_a_measurement(monkeypatch):
    from fuzz.campaign.followups.local import SHARE_ENV

    monkeypatch.setenv(SHARE_ENV, "4")  # a quarter
    assert LocalRemote(16, beside_cases=True).slots(1000, draining=False) == 4
    assert LocalRemote(16, beside_cases=True).slots(1000, draining=True) == 16
    monkeypatch.setenv(SHARE_ENV, "a lot")  # not a number: the default half
    assert LocalRemote(16, beside_cases=True).slots(1000, draining=False) == 8


def test_a_drain_uses_every_slot_at_once():
    assert LocalRemote(16).slots(1, draining=False) == 16
    assert LocalRemote(2, beside_cases=True).slots(50, draining=False) == 1


def test_workers_pause_for_the_followups_only_where_the_cpus_are_short():
    # one worker per CPU (the default): the jobs running and their runner come out of the workers
    assert workers_to_pause(16, 16, 0) == 0
    assert workers_to_pause(16, 16, 1) == 2  # one job and its runner
    assert workers_to_pause(16, 16, 3) == 4
    assert workers_to_pause(16, 16, 1000) == 8  # at most half
    # CPUs to spare (16 workers on a 64-CPU box): no worker pauses
    assert workers_to_pause(16, 64, 32) == 0  # the runner runs at most half the CPUs' jobs
    # under 8 CPUs the follow-ups run one at a time in their runner, beside every worker
    assert workers_to_pause(2, 2, 50) == 0


def test_a_job_waiting_for_a_child_process_gives_the_runners_lock_up():
    """The runner serializes corpus writes with one lock; a job's standalone check (a
    fresh process) must not hold it, or every other job waits behind it."""
    import sys
    import threading

    from fuzz.judge.isolated import lock_given_up_while_waiting, run_command

    def others_get_the_lock(give_up: bool) -> bool:
        lock, started, got = threading.Lock(), threading.Event(), []

        def job():
            with lock:
                started.set()
                if give_up:
                    with lock_given_up_while_waiting(lock):
                        run_command([sys.executable, "-c", "import time; time.sleep(1.5)"], timeout=30, env=None,
                                    cwd=".")
                else:
                    run_command([sys.executable, "-c", "import time; time.sleep(1.5)"], timeout=30, env=None, cwd=".")

        t = threading.Thread(target=job)
        t.start()
        started.wait()
        got.append(lock.acquire(timeout=1.0))
        if got[0]:
            lock.release()
        t.join()
        return got[0]

    assert others_get_the_lock(give_up=True)
    assert not others_get_the_lock(give_up=False)


def test_a_runner_past_its_job_limit_keeps_dispatching_while_a_long_job_runs(tmp_path):
    """The recycle limit (max_jobs) must not starve the queue: with one long job running (a hang's triage
    takes up to 20 minutes), a runner past its limit still starts the jobs queued behind it, and leaves
    once none runs. Stopping the dispatch at the limit left a soak's 68 jobs waiting 500 s."""
    import threading
    import time

    from fuzz.campaign.followups.runner import JobLog
    from fuzz.campaign.followups.schedule import run_parallel

    jobs = JobLog(str(tmp_path))
    slow, fast = "5" * 12, [f"f{i:011x}" for i in range(6)]  # entry keys
    for name in [slow] + fast:
        jobs.queue(name, ["shrink"], {})
    release, done = threading.Event(), []

    class Remote:
        where = "here"
        lock = threading.Lock()

        def slots(self, pending, draining):
            return 4

    def run_job(job, remote):
        if job.entry == slow:  # computes elsewhere: the runner's lock is given up meanwhile, as LocalRemote does
            remote.lock.release()
            try:
                release.wait(30)
            finally:
                remote.lock.acquire()
        done.append(job.entry)
        return "done", job.entry

    result = []
    runner = threading.Thread(target=lambda: result.append(run_parallel(
        jobs, Remote(), linger=0.0, max_jobs=2, log=lambda *_: None, run_job=run_job, max_starts=2,
        order={"shrink": 0}, told_to_drain=lambda timeout: True)))
    runner.start()
    deadline = time.monotonic() + 20
    while len(done) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(done) == fast, done  # every one, while the slow job runs
    assert runner.is_alive()
    release.set()
    runner.join(10)
    assert result == [7] and done[-1] == slow
