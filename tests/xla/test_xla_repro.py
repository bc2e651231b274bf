"""The standalone repro.py agrees with the in-process verdict."""

import subprocess
import sys

import pytest

pytest.importorskip("torch_xla")

from fuzz.campaign.generate import generate  # noqa: E402
from fuzz.judge.verdict import Outcome  # noqa: E402
from fuzz.judge.steps import run_step_program  # noqa: E402
from fuzz.program.step_codegen import step_repro_source  # noqa: E402
from strategies.steps import step_programs  # noqa: E402
from xla_programs import copy_alias_program, seed_program  # noqa: E402


def run_repro(src: str, tmp_path) -> subprocess.CompletedProcess:
    path = tmp_path / "repro.py"
    path.write_text(src)
    # Only torch and torch_xla: run it from an empty directory, without the repo on the path.
    return subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "PJRT_DEVICE": "CPU"})


def test_seed_repro_agrees_and_prints_each_observation(tmp_path):
    r = run_repro(step_repro_source(seed_program(), title="seed"), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "observation 0 t1: expected 3, actual 3" in r.stdout
    assert "observation 1 t2: expected 4, actual 4" in r.stdout
    assert "OK: XLA and eager agree" in r.stdout


def test_repro_exits_1_on_disagreement(tmp_path):
    src = step_repro_source(seed_program())
    # Plant a wrong expectation: the last observed value, off by one.
    hook = "        expected = run_eager()\n"
    assert hook in src
    src = src.replace(hook, hook + "        expected[-1] = (expected[-1][0], expected[-1][1] + 1)\n")
    r = run_repro(src, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISMATCH" in r.stdout and "FAIL" in r.stdout


def test_repro_and_verdict_agree_on_generated_programs(tmp_path):
    # fresh=True: a repro is one program in a new process, so compare with that.
    for p in generate(step_programs(), seed_=3, count=2):
        v = run_step_program(p, fresh=True)
        r = run_repro(step_repro_source(p), tmp_path)
        assert (r.returncode == 0) == (not v.is_finding), (v.summary(), r.stdout[-2000:], r.stderr[-2000:])


def test_repro_and_verdict_agree_on_a_failing_program(tmp_path):
    """The copy_/aliasing bug of torch_xla 2.9.0: both say fail."""
    p = copy_alias_program()
    v = run_step_program(p, fresh=True)
    r = run_repro(step_repro_source(p), tmp_path)
    assert (r.returncode == 1) == v.is_finding, (v.summary(), r.stdout[-2000:])
    if v.is_finding:
        assert v.outcome is Outcome.COMPILED_ERROR and "FAIL: XLA raised" in r.stdout
