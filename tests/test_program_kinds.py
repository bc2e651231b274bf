"""Both program kinds (torch.compile programs, torch_xla step programs) go
through one corpus, signature and command line; without torch_xla, the XLA
parts fail with clear errors, never a traceback."""

import importlib.util
import json

import pytest

from fuzz.findings.store.corpus import Corpus
from fuzz.program.ir import ProgramError
from fuzz.kinds import KINDS, ProgramKind, kind_of, load_program
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.program.step_ir import Block, Step, StepProgram
from helpers import program as make_program
from test_cli import shapefuzz

NO_XLA = importlib.util.find_spec("torch_xla") is None


def program():
    return make_program([("relu", ["x0"], {})])


def steps_program(inplace: bool = True) -> StepProgram:
    op = Step("add_", ["t0", "t1"]) if inplace else Step("add", ["t0", "t1"], out="t2")
    return StepProgram(blocks=[Block(steps=[
        Step("tensor", params={"data": [1, 2]}, out="t0"), Step("tensor", params={"data": [3, 4]}, out="t1"),
        Step("sync"), op, Step("sync"), Step("observe", ["t0"])])])


def divergence() -> Verdict:
    return Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, where="observation 0 t0",
                   message="values mismatch", numbers={"observation": 0, "mismatched": 2, "numel": 2})


def test_load_program_tells_the_kinds_apart():
    p, q = steps_program(), program()
    assert kind_of(p.to_dict()).name == kind_of(p).name == "steps"
    assert kind_of(q.to_dict()).name == kind_of(q).name == "compiled"
    assert isinstance(load_program(p.to_dict()), StepProgram)
    assert load_program(q.to_dict()).to_dict() == q.to_dict()
    with pytest.raises(ProgramError):
        load_program({"blocks": "no"})
    with pytest.raises(ProgramError):
        load_program([1, 2])


def test_step_signature_names_xla_and_the_op_kinds():
    a = signature(divergence(), steps_program(inplace=True))
    b = signature(divergence(), steps_program(inplace=False))
    assert "device: xla" in a.text and "families: inplace " in a.text
    assert "families: pointwise " in b.text and a.key != b.key
    # a compiled program's divergence never shares an XLA bucket
    assert signature(divergence(), program()).key != a.key


def test_step_minimal_signature_names_the_steps_in_order_and_the_settings():
    from fuzz.findings.signature import minimal_signature

    a = minimal_signature(divergence(), steps_program(inplace=True))
    assert a.minimal and a.text == ("divergence | observation | needs: sync > inplace > sync > observe | "
                                    "dtype: int | flags: - | device: xla")
    assert minimal_signature(divergence(), steps_program(inplace=False)).key != a.key
    q = steps_program()
    q.settings.functionalization = False
    assert "flags: functionalization=False" in minimal_signature(divergence(), q).text
    # a compiled program's minimal signature never shares an XLA key
    assert minimal_signature(divergence(), program()).key != a.key


def test_corpus_round_trips_a_step_entry(tmp_path):
    p, v = steps_program(), divergence()
    path, new = Corpus(tmp_path).record(p, v, signature(v, p))
    assert new
    e = Corpus(tmp_path).load(path)
    assert isinstance(e.program, StepProgram) and e.program.to_dict() == p.to_dict()
    repro = (path / "repro.py").read_text()
    assert "import torch_xla" in repro and "t0.add_(t1)" in repro
    (path / "program.json").write_text(json.dumps({"blocks": [{"steps": [{"op": "nope"}]}], "schema": 1}))
    c = Corpus(tmp_path)
    assert list(c.entries()) == [] and len(c.errors) == 1 and "program.json" in str(c.errors[0])


@pytest.mark.skipif(not NO_XLA, reason="checks the error shown when torch_xla is missing")
def test_run_xla_without_torch_xla_says_how_to_set_it_up(tmp_path):
    r = shapefuzz("run", "--backend", "xla", "--max-cases", "1", "--state", str(tmp_path / "s"),
                  "--corpus", str(tmp_path / "c"))
    assert r.returncode == 2 and "setup-xla.sh" in r.stderr and "Traceback" not in r.stderr


def test_triage_of_a_step_entry_is_refused_clearly(tmp_path):
    p, v = steps_program(), divergence()
    path, _ = Corpus(tmp_path).record(p, v, signature(v, p))
    r = shapefuzz("triage", str(path))
    assert r.returncode == 2 and "torch_xla step-program entry" in r.stderr


def test_commands_take_either_kind_and_refuse_what_does_not_apply(tmp_path):
    case = tmp_path / "steps.json"
    case.write_text(steps_program().to_json())
    r = shapefuzz("repro", str(case))
    assert r.returncode == 0 and "import torch_xla" in r.stdout
    r = shapefuzz("repro", str(case), "--device", "cuda")
    assert r.returncode == 2 and "step program" in r.stderr and "Traceback" not in r.stderr


def test_every_kind_implements_the_whole_protocol():
    """A method a kind leaves to ProgramKind's NotImplementedError is a hole
    some command would fall into."""
    abstract = {name for name, f in vars(ProgramKind).items() if callable(f) and _raises_not_implemented(f)}
    assert abstract >= {"load", "repro_source", "judge", "judge_isolated", "evaluate", "strategy", "render_report",
                        "runs_on", "shrink_entry", "shrink_case"}
    for kind in KINDS.values():
        missing = sorted(n for n in abstract if getattr(type(kind), n) is getattr(ProgramKind, n))
        assert not missing, f"{kind.name} does not implement {missing}"


def _raises_not_implemented(f) -> bool:
    import inspect

    try:
        return "raise NotImplementedError" in inspect.getsource(f)
    except (OSError, TypeError):
        return False


@pytest.mark.skipif(not NO_XLA, reason="checks replay where torch_xla is missing")
def test_replay_skips_a_step_entry_without_torch_xla_and_does_not_fail(tmp_path):
    from fuzz.findings.replay import SKIPPED, exit_status, replay

    p, v = steps_program(), divergence()
    Corpus(tmp_path).record(p, v, signature(v, p))
    rows = replay(tmp_path, timeout=60)
    assert [r.status for r in rows] == [SKIPPED] and ".venv-xla" in rows[0].reason
    assert exit_status(rows) == 0
