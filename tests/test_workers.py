"""The worker pool survives crashing, hanging, memory-hungry and CUDA-poisoned
backends (fuzz/faults.py), reports each with the right verdict, replaces the
worker, and judges later cases exactly as run_case does in-process.

Spawned workers import torch (seconds each), so the fault tests share one
single-worker pool and every restart is one the test means to cause."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fuzz.program.ir import OpCall, Program, RunSettings, TensorInput
from fuzz.judge.verdict import Outcome
from fuzz.campaign.workers import WorkerPool, faulthandler_frames
from fuzz.judge.poison import replace_cause

REPO = Path(__file__).resolve().parents[1]
TIMING = ("seconds", "compile_seconds")


def relu(backend="eager", sizes=(3, 6, 7), device="cpu"):
    """Faults fire on dims > 4: sizes (3, 6, 7) trip them at call 1."""
    return Program(sizes={"s0": list(sizes)}, inputs=[TensorInput(name="x0", shape=["s0"])],
                   ops=[OpCall(op="relu", args=["x0"], params={}, out="v0")], outputs=["v0"],
                   settings=RunSettings(backend=backend, device=device))


def cuda_devices():
    import torch

    return list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []


def judge(pool, program, timeout=None):
    pool.submit("case", program, timeout=timeout)
    (result,) = list(pool.results())
    return result


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_dead(pids, within=10.0):
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=1, timeout=120, recycle_after=None) as p:
        assert p.wait_ready(180)
        yield p


def assert_replaced_and_working(pool, old_pid, cause, before):
    assert pool.restarts[cause] == before + 1
    case_id, v, info = judge(pool, relu())
    assert v["outcome"] == "ok", v
    assert info["pid"] != old_pid


@pytest.mark.parametrize("fault,sig", [("segfault", "SIGSEGV"), ("sigkill", "SIGKILL")])
def test_killed_worker_is_a_crash(pool, fault, sig):
    before = pool.restarts["crash"]
    _, v, info = judge(pool, relu(f"fuzz.judge.faults:{fault}"))
    assert v["outcome"] == Outcome.CRASH.value and v["stage"] == "process"
    assert v["exc_type"] == sig and sig in v["message"].splitlines()[0]
    assert v["call"] is None and info["restart"] == "crash" and info["wall"] is None
    if fault == "segfault":  # faulthandler's stack, innermost last
        assert v["frames"][-1].endswith(":_segfault") and "Segmentation fault" in v["message"]
    assert_replaced_and_working(pool, info["pid"], "crash", before)


def test_fault_backends_are_eager_on_small_inputs(pool):
    before = sum(pool.restarts.values())
    for fault in ("segfault", "hang", "cuda_error", "memory"):
        assert judge(pool, relu(f"fuzz.judge.faults:{fault}", sizes=(1, 2, 3)))[1]["outcome"] == "ok"
    assert sum(pool.restarts.values()) == before


def test_hang_is_killed(pool):
    before = pool.restarts["hang"]
    start = time.monotonic()
    _, v, info = judge(pool, relu("fuzz.judge.faults:hang"), timeout=3)
    assert v["outcome"] == Outcome.HANG.value and v["stage"] == "process"
    assert "3 s" in v["message"] and time.monotonic() - start < 20
    assert v["frames"][-1].endswith(":_hang")  # stack dumped before the kill
    assert_replaced_and_working(pool, info["pid"], "hang", before)


def test_cuda_error_replaces_worker(pool):
    before = pool.restarts["cuda"]
    _, v, info = judge(pool, relu("fuzz.judge.faults:cuda_error"))
    assert v["outcome"] == Outcome.COMPILED_ERROR.value and "illegal memory access" in v["message"]
    assert v["call"] == 1 and info["restart"] == "cuda"
    assert_replaced_and_working(pool, info["pid"], "cuda", before)


def test_memory_hog_is_survived(pool):
    _, v, info = judge(pool, relu("fuzz.judge.faults:memory"))
    assert v["outcome"] in (Outcome.CRASH.value, Outcome.COMPILED_ERROR.value)
    if v["outcome"] == Outcome.COMPILED_ERROR.value:
        assert v["exc_type"] == "MemoryError" and info["restart"] == "memory"
    assert judge(pool, relu())[1]["outcome"] == "ok"


def test_bad_program_keeps_worker(pool):
    _, ok, before = judge(pool, relu())
    restarts = sum(pool.restarts.values())
    _, v, info = judge(pool, {"schema": 999})
    assert v["outcome"] == Outcome.INVALID.value and v["exc_type"] == "ProgramError"
    assert info["error"] == "program" and info["pid"] == before["pid"]
    _, v, info = judge(pool, relu("no_such_backend"))  # refused by the schema, before the harness
    assert v["outcome"] == Outcome.INVALID.value and info["error"] == "program"
    assert sum(pool.restarts.values()) == restarts and info["pid"] == before["pid"]


def test_same_verdicts_as_in_process(pool):
    from fuzz.campaign.generate import generate
    from fuzz.judge.runner import run_case
    from strategies import programs

    progs = list(generate(programs(backend="eager", max_ops=3), seed_=7, count=4))
    got = {cid: v for cid, v, _ in pool.run(enumerate(progs))}
    for i, p in enumerate(progs):
        want = run_case(p).to_dict()
        assert {k: v for k, v in got[i].items() if k not in TIMING} == \
               {k: v for k, v in want.items() if k not in TIMING}, p.to_json()


def test_recycle_after(pool):
    pool.recycle_after = 2
    try:
        before = pool.restarts["recycle"]
        infos = [judge(pool, relu())[2] for _ in range(4)]
    finally:
        pool.recycle_after = None
    pids = [i["pid"] for i in infos]
    assert all(pids.count(p) <= 2 for p in pids) and len(set(pids)) >= 2
    recycled = [i for i in infos if i["restart"] == "recycle"]
    assert len(recycled) >= 1 and pool.restarts["recycle"] == before + len(recycled)


def marked(program, *marks):
    d = program.to_dict()
    d["inputs"][0]["marks"] = list(marks)
    return d


def test_programs_alike_run_one_at_a_time_and_the_rest_are_skipped_after_a_hang(tmp_path):
    """Three hanging programs that differ only in their dims' marks, beside a
    good one, on two workers: the second worker takes the good one, not a
    second copy of the hang, and once the first hangs the other two are
    SKIPPED at once (one time limit spent, not three)."""
    from fuzz.kinds import named

    hang = relu("fuzz.judge.faults:hang")
    with WorkerPool(workers=2, timeout=4, workdir=str(tmp_path), recycle_after=None,
                    similar=named("compiled").similar_key) as pool:
        assert pool.wait_ready(180)
        out = {c: v for c, v, _ in pool.run([("a", marked(hang, "static")), ("b", marked(hang, "dynamic")),
                                              ("c", marked(hang, "maybe_dynamic")), ("ok", relu().to_dict())])}
        assert {c: v["outcome"] for c, v in out.items()} == {"a": "hang", "b": "skipped", "c": "skipped", "ok": "ok"}
        assert "case a" in out["b"]["message"] and pool.restarts["hang"] == 1  # one time limit spent, not three
        # alike but not hanging: each is judged, one after another
        ok = {c: v["outcome"] for c, v, _ in pool.run([(m, marked(relu(), m)) for m in ("static", "dynamic")])}
        assert ok == {"static": "ok", "dynamic": "ok"}


def test_a_hang_in_a_cold_campaign_pool_is_judged_once_more_before_it_counts(tmp_path):
    """The first compile runs past the limit (slow_first_compile: a loaded machine building Inductor's
    precompiled header); judged again, the case is ok. Once a worker has answered, a hang counts at once."""
    notes = []
    env = {"SHAPEFUZZ_TEST_COLD": str(tmp_path / "built"), "SHAPEFUZZ_ALLOW_BACKEND": "tests.planted_extra"}
    with WorkerPool(workers=1, timeout=10, workdir=str(tmp_path / "pool"), recycle_after=None, env=env,
                    rerun_cold_hangs=True, note=notes.append) as pool:
        _, v, _ = judge(pool, relu("tests.planted_extra:slow_first_compile"))
        assert v["outcome"] == "ok", v
        assert pool.cold.reruns == {"case"} and pool.restarts["cold-hang"] == 1 and pool.restarts["hang"] == 0
        (note,) = notes
        assert "judging it once more" in note and "load average" in note and "10 s" in note
        _, v, _ = judge(pool, relu("fuzz.judge.faults:hang"), timeout=3)  # warm now: a hang is a hang
        assert v["outcome"] == "hang" and pool.restarts["cold-hang"] == 1 and pool.restarts["hang"] == 1
        # the worker froze what its imports and warm-up left (fuzz/heap.py) before its first case
        _, v, _ = judge(pool, relu("tests.planted_extra:tells_its_frozen_heap"))
        assert v["outcome"] == "compiled-only-error" and int(v["message"].split(": ")[-1]) > 100_000, v


def test_a_cold_hang_is_judged_again_once_per_case_and_per_worker_until_a_case_is_answered():
    from collections import deque

    from fuzz.campaign.cold_start import ColdStart
    from fuzz.campaign.workers import _Job

    def hung(case):
        return _Job(case, 0, 3.0, 0.0, None, {"program": case})

    notes, pending = [], deque([("later", {}, 3.0, None)])
    cold = ColdStart(True, notes.append)
    assert cold.rerun(hung("a"), 2, pending) and pending[0] == ("a", {"program": "a"}, 3.0, None)
    assert not cold.rerun(hung("a"), 2, pending)  # hung again: it counts
    assert cold.rerun(hung("b"), 2, pending) and not cold.rerun(hung("c"), 2, pending)  # one per worker
    assert len(notes) == 2 and all("judging it once more" in n for n in notes)
    warm = ColdStart(True)
    warm.answered = 1
    assert not warm.rerun(hung("a"), 2, pending) and not ColdStart(False).rerun(hung("a"), 2, pending)


def test_paused_workers_take_no_case_until_resumed(tmp_path):
    """The campaign lends the last workers' CPUs to follow-ups (pool.paused): they
    judge nothing meanwhile, and take cases again once resumed."""
    with WorkerPool(workers=2, timeout=120, workdir=str(tmp_path), recycle_after=None) as pool:
        assert pool.wait_ready(180)
        pool.paused = 1
        assert {info["worker"] for _, _, info in pool.run((k, relu()) for k in range(4))} == {0}
        pool.paused = 0
        assert {info["worker"] for _, _, info in pool.run((k, relu()) for k in range(4))} == {0, 1}


def test_similar_key_ignores_marks_only():
    from fuzz.kinds import named

    key = named("compiled").similar_key
    base = relu()
    assert key(marked(base, "static")) == key(marked(base, "dynamic"))
    assert key(relu(sizes=(3, 6, 8)).to_dict()) != key(base.to_dict())
    assert key(relu(backend="inductor").to_dict()) != key(base.to_dict())
    assert named("steps").similar_key({"steps": []}) is None


def test_close_kills_busy_and_idle_workers(tmp_path):
    pool = WorkerPool(workers=2, timeout=60, workdir=str(tmp_path))
    assert pool.wait_ready(180)
    pids = pool.pids()
    assert len(pids) == 2 and all(alive(p) for p in pids)
    assert os.environ.get("TORCHINDUCTOR_CACHE_DIR") != str(tmp_path / "w0" / "inductor")  # not leaked
    pool.submit("hang", relu("fuzz.judge.faults:hang"))
    pool.submit("ok", relu())
    assert next(pool.results(timeout=60))[0] == "ok" and pool.unfinished() == ["hang"]
    assert (tmp_path / "w0" / "inductor").is_dir() and (tmp_path / "w1" / "triton").is_dir()
    pool.close()
    assert wait_dead(pids, within=5) == []
    with pytest.raises(RuntimeError):
        pool.submit("late", relu())


@pytest.mark.skipif(not cuda_devices(), reason="needs a CUDA GPU")
def test_real_device_assert_poisons_and_is_replaced(monkeypatch):
    """A real device-side assert poisons the worker's CUDA context: without
    the replacement the next case on that worker fails; with it, it passes."""
    cases = [("assert", relu("fuzz.judge.faults:device_assert", device="cuda")), ("next", relu(device="cuda"))]
    with monkeypatch.context() as m:
        m.setattr("fuzz.judge.poison.REPLACE_AFTER", {})
        with WorkerPool(devices=cuda_devices()[:1], workers_per_gpu=1, timeout=300) as pool:
            control = {cid: (v, info) for cid, v, info in pool.run(cases, prefetch=1)}
    assert control["next"][0]["outcome"] != "ok" and "CUDA error" in control["next"][0]["message"]
    assert control["assert"][1]["pid"] == control["next"][1]["pid"]
    with WorkerPool(devices=cuda_devices()[:1], workers_per_gpu=2, timeout=300) as pool:
        assert pool.workers == 2
        _, v, info = judge(pool, cases[0][1])
        assert v["outcome"] == Outcome.COMPILED_ERROR.value and "device-side assert" in v["message"], v
        assert info["restart"] == "cuda" and info["device"] == 0 and pool.restarts["cuda"] == 1
        later = list(pool.run([cases[1], ("inductor", relu("inductor", device="cuda"))]))
    assert [v["outcome"] for _, v, _ in later] == ["ok", "ok"], later
    assert info["pid"] not in [i["pid"] for _, _, i in later]


SCRIPT = textwrap.dedent("""
    import sys
    from fuzz.campaign.workers import WorkerPool
    from tests.test_workers import relu
    with WorkerPool(workers=1, timeout=60, workdir=sys.argv[1]) as pool:
        pool.wait_ready(180)
        pool.submit("hang", relu("fuzz.judge.faults:hang"))
        print(*pool.pids(), flush=True)
        list(pool.results())
""")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_parent_interrupted_or_killed_leaves_no_orphans(sig, tmp_path):
    """Ctrl-C: the parent kills its workers on the way out. SIGKILL: nothing
    runs in the parent; each worker notices and exits within a second or so."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # not an inherited SIG_IGN
    try:
        pids = [int(x) for x in proc.stdout.readline().split()]
        assert pids and all(alive(p) for p in pids)
        time.sleep(2)  # the case is running (hanging) now
        proc.send_signal(sig)
        proc.wait(30)
        assert wait_dead(pids, within=10) == []
    finally:
        proc.kill()
        proc.wait()


def test_replace_cause_patterns():
    assert replace_cause({"exc_type": "RuntimeError", "message": "CUDA error: misaligned address"}) == "cuda"
    assert replace_cause({"exc_type": "AcceleratorError", "message": "CUBLAS_STATUS_EXECUTION_FAILED"}) == "cuda"
    assert replace_cause({"exc_type": "MemoryError", "message": ""}) == "memory"
    assert replace_cause({"exc_type": "RuntimeError", "message": "shape mismatch"}) is None


def test_faulthandler_frames():
    dump = ["Fatal Python error: Segmentation fault", "",
            "Thread 0x00007f01 (most recent call first):",
            '  File "/x/threading.py", line 9 in watch', "",
            "Current thread 0x00007f02 (most recent call first):",
            '  File "/x/site-packages/torch/f.py", line 3 in inner',
            '  File "/r/fuzz/workers.py", line 90 in _worker_main', "",
            "Extension modules: numpy (total: 1)", "printed by the backend"]
    frames, rest = faulthandler_frames(dump)
    assert frames == ["/r/fuzz/workers.py:90:_worker_main", "torch/f.py:3:inner"]
    assert rest == ["Fatal Python error: Segmentation fault", "printed by the backend"]


def test_findings_that_poison_the_process_are_rerun_isolated():
    from fuzz.judge.verdict import Outcome, Verdict
    from fuzz.judge.poison import needs_isolation

    cuda = Verdict(outcome=Outcome.COMPILED_ERROR, exc_type="torch.AcceleratorError",
                   message="CUDA error: an illegal memory access was encountered")
    assert needs_isolation(cuda) and needs_isolation(cuda.to_dict())
    assert needs_isolation(Verdict(outcome=Outcome.CRASH, exc_type="SIGSEGV"))
    assert needs_isolation(Verdict(outcome=Outcome.HANG))
    assert not needs_isolation(Verdict(outcome=Outcome.COMPILED_ERROR, exc_type="ZeroDivisionError",
                                       message="division by zero"))
    assert not needs_isolation(Verdict(outcome=Outcome.DIVERGENCE))


def test_cuda_error_finding_is_not_rerun_in_the_poisoned_process(monkeypatch):
    """After a CUDA error nothing more can run in the process (on a GPU the
    rerun's inputs cannot even be made), so run_case keeps the first verdict;
    any other finding is rerun once to rule out flakiness."""
    import fuzz.judge.runner as runner
    from helpers import program

    calls = []
    real = runner._run_once
    monkeypatch.setattr(runner, "_run_once", lambda p, *checks: calls.append(p) or real(p, *checks))
    v = runner.run_case(program([("relu", ["x0"], {})], backend="fuzz.judge.faults:cuda_error"))
    assert v.outcome.value == "compiled-only-error" and "illegal memory access" in v.message
    assert len(calls) == 1
    v = runner.run_case(program([("relu", ["x0"], {})], backend="fuzz.planted:corrupt_large",
                                sizes={"s0": [3, 5, 12]}, marks=["dynamic"]))
    assert v.is_finding and len(calls) == 3


def test_a_confirmed_signature_is_judged_once(tmp_path):
    """A finding is rerun (a flaky one becomes FLAKY) unless its signature is
    in pool.confirmed, which a campaign fills with the findings it has seen
    hold: tests.planted_extra:wrong_first_graph is wrong only at its
    process's first compile, so only a second judgement tells."""
    from fuzz.findings.signature import signature
    from fuzz.judge.verdict import Verdict

    flaky = relu("tests.planted_extra:wrong_first_graph")
    with WorkerPool(workers=1, timeout=120, workdir=str(tmp_path / "once"), rerun=False) as pool:
        raw = judge(pool, flaky)[1]
    assert raw["outcome"] == "divergence"
    key = signature(Verdict.from_dict(raw), flaky).key
    # recycled after each case: every case meets a fresh process, whose first compile is wrong
    with WorkerPool(workers=1, timeout=120, workdir=str(tmp_path / "twice"), recycle_after=1) as pool:
        assert judge(pool, flaky)[1]["outcome"] == "flaky"  # its rerun (a second compile) is right
        pool.confirmed.add("not-this-one")
        assert judge(pool, flaky)[1]["outcome"] == "flaky"
        pool.confirmed.add(key)
        v = judge(pool, flaky)[1]
        assert v["outcome"] == "divergence" and signature(Verdict.from_dict(v), flaky).key == key
