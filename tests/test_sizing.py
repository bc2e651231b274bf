"""Defaults sized to the machine: one worker per usable CPU (spread over the
GPUs on CUDA), one Inductor compile thread each, OMP threads split among
them; explicit flags and the user's environment win."""

import os
import subprocess
import sys

from fuzz.campaign.sizing import COMPILE_THREADS, size_pool, usable_cpus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_one_worker_per_usable_cpu_by_default():
    s = size_pool(cpus=16, environ={})
    assert s.workers == 16 and s.env == {COMPILE_THREADS: "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert usable_cpus() == len(os.sched_getaffinity(0))


def test_on_cuda_the_cpus_are_shared_across_the_gpus():
    s = size_pool(None, [0, 1], cpus=16, environ={})
    assert s.workers == 16 and s.devices == [0, 1]
    assert "8 per GPU" in s.line() and "devices=cuda:0,1" in s.line()
    assert size_pool(None, list(range(4)), cpus=2, environ={}).workers == 4  # at least one per GPU


def test_explicit_workers_and_workers_per_gpu_win():
    s = size_pool(None, [0, 1], 4, cpus=16, environ={})
    assert s.workers == 8 and s.env["OMP_NUM_THREADS"] == "2" and "--workers-per-gpu" in s.line()
    s = size_pool(3, None, cpus=16, environ={})
    assert s.workers == 3 and s.env["OMP_NUM_THREADS"] == "5" and s.env[COMPILE_THREADS] == "1"
    s = size_pool(0, None, cpus=16, environ={})
    assert s.workers == 0 and s.env == {} and "in this process" in s.line()


def test_variables_the_user_set_are_left_alone(monkeypatch):
    monkeypatch.setenv(COMPILE_THREADS, "4")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    s = size_pool(cpus=16)
    assert s.env == {"MKL_NUM_THREADS": "1"}
    assert "compile threads=4 (set)" in s.line() and "omp threads=2 (set)" in s.line()


def test_the_pool_gives_its_workers_the_sizing_env(monkeypatch):
    from fuzz.campaign.workers import WorkerPool

    monkeypatch.delenv(COMPILE_THREADS, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    pool = WorkerPool(workers=1, timeout=60, start_timeout=60)
    try:
        assert pool._env[COMPILE_THREADS] == "1" and pool._env["OMP_NUM_THREADS"] == str(usable_cpus())
    finally:
        pool.close()
    pool = WorkerPool(workers=1, timeout=60, threads=3, env={COMPILE_THREADS: "2"})
    try:  # explicit threads= and env= over the sizing's
        assert pool._env["OMP_NUM_THREADS"] == "3" and pool._env[COMPILE_THREADS] == "2"
    finally:
        pool.close()


def test_run_prints_its_choices(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in (COMPILE_THREADS, "OMP_NUM_THREADS")}
    env["PYTHONPATH"] = ROOT
    r = subprocess.run([sys.executable, "-m", "fuzz", "run", "--backend", "eager", "--max-cases", "1", "--no-shrink",
                        "--no-triage", "--state", str(tmp_path / "st"), "--corpus", str(tmp_path / "c")],
                       capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    n = usable_cpus()
    line = next(ln for ln in r.stdout.splitlines() if "compile threads" in ln)
    assert f"workers={n} (default: one per usable CPU" in line
    assert f"compile threads=1 per worker, omp threads={max(1, n // n)} per worker, devices=cpu" in line
