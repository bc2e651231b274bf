"""Code generation: exact text for a small program, and standalone repro
scripts that agree with the in-process verdict."""

import os

import pytest

from fuzz.program.codegen import program_lines, repro_source
from fuzz.program.ir import TensorInput
from fuzz.judge.runner import run_case

from helpers import draw_programs, program, run_standalone, scripts_in_a_zygote

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_program_text_is_exact():
    p = program([
        ("pad", ["x0"], {"mode": "reflect", "pad": [1, {"dim": -1, "div": 2, "add": -1}]}),
        ("relu_", ["v0"], {}),
        ("slice", ["v1"], {"dim": -2, "start": 1, "stop": None, "step": 2}),
        ("sum", ["v2"], {"dim": [0, 1], "keepdim": True}),
        ("slice_assign", ["v0"], {"dim": -1, "start": None, "stop": -1, "step": 1, "value": 0.5}),
    ], shape=(2, "s0"), sizes={"s0": [4, 5, 9]}, outputs=["v3", "v4"])
    assert "\n".join(program_lines(p)) == """\
def program(x0):
    v0 = F.pad(x0, (1, x0.shape[-1] // 2 - 1,), mode='reflect')
    v1 = v0.relu_()
    v2 = v1[..., 1::2, :]
    v3 = torch.sum(v2, dim=(0, 1), keepdim=True)
    v0[..., :-1] = 0.5
    v4 = v0
    return (v3, v4)"""


def test_repro_imports_only_torch():
    src = repro_source(program([("relu", ["x0"], {})], backend="inductor"))
    imports = {line.split()[1].split(".")[0] for line in src.splitlines() if line.startswith(("import ", "from "))}
    assert imports <= {"torch", "re", "sys", "time"}, imports
    compile(src, "repro.py", "exec")


def run_repro(p, tmp_path):
    path = tmp_path / "repro.py"
    path.write_text(repro_source(p))
    return run_standalone(path, dict(os.environ, PYTHONPATH=ROOT))


@pytest.mark.parametrize("backend", ["fuzz.planted:corrupt_large", "fuzz.planted:storage_error_on_pad",
                                     "fuzz.planted:mutate_input"])
def test_repro_reproduces_planted_bugs(backend, tmp_path):
    p = program([("pad", ["x0"], {"mode": "constant", "pad": [1, 1], "value": 0.0}), ("relu_", ["v0"], {})],
                sizes={"s0": [3, 9, 12]}, marks=["dynamic"], backend=backend)
    assert run_case(p).is_finding
    r = run_repro(p, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL: compiled and eager disagree" in r.stdout


@pytest.mark.campaign
def test_repro_agrees_with_in_process_verdicts(tmp_path):
    """Generated programs on a correct backend and on a planted one: the
    standalone script's exit status matches run_case's verdict."""
    # four of each: both exit statuses, from drawn programs (a dozen took one to two minutes of CI to say the same)
    cases = draw_programs(4, seed=21, backend="aot_eager", max_ops=4)
    cases += [p for p in draw_programs(40, seed=22, backend="fuzz.planted:corrupt_large", max_ops=3)][:4]
    statuses = []
    with scripts_in_a_zygote():  # eight scripts: one import of torch, not one each
        for p in cases:
            v = run_case(p)
            if not v.is_finding and v.outcome.value != "ok":
                continue  # rejected/invalid cases are not bug repros
            r = run_repro(p, tmp_path)
            assert r.returncode == (1 if v.is_finding else 0), (v.summary(), r.stdout[-2000:], r.stderr[-2000:])
            statuses.append(r.returncode)
    assert len(statuses) >= 6 and set(statuses) == {0, 1}, statuses


def test_repro_for_inputs_of_every_layout(tmp_path):
    inputs = [TensorInput(name="x0", shape=[2, "s0"], layout="transposed"),
              TensorInput(name="x1", shape=["s0"], layout="offset", dtype="float16"),
              TensorInput(name="x2", shape=[2, "s0"], layout="expanded", layout_dim=0, dtype="int32")]
    p = program([("add", ["x0", "x1"], {}), ("mul", ["v0", "x2"], {})], inputs=inputs, backend="eager")
    r = run_repro(p, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
