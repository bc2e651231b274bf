"""The maintainers' rules (what they call no bug): each not-bug class is judged by design
(REJECTED, naming the rule) or tracked as one class, and a real bug of the same
shape is still found."""

import pytest
import torch

from fuzz.findings.signature import minimal_signature, signature
from fuzz.judge import by_design, loop, runner
from fuzz.judge.compare import compare_outputs, indices_agree
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.program.ir import RunSettings, TensorInput

from helpers import program

# narrow to half the dim: the first call (s0 = 2) specialises s0 // 2 == 1, the next recompiles
HALF = [("narrow", ["x0"], {"dim": 0, "start": 0, "length": {"dim": 0, "div": 2, "add": 0}}), ("relu", ["v0"], {})]


def _half(backend):
    p = program(HALF, marks=["dynamic"], sizes={"s0": [2, 5, 6]}, backend=backend)
    p.settings = RunSettings(backend=backend)
    return p


def test_a_recompile_from_a_derived_size_0_1_specialization_is_by_design(monkeypatch):
    v = runner.run_case(_half("eager"), rerun=False)
    assert v.outcome is Outcome.REJECTED and v.rule == "size-oblivious-recompile", v.summary()
    monkeypatch.setattr(runner.expected, "REJUDGE", ())  # without the rule: the recompile is a finding
    v = runner.run_case(_half("eager"), rerun=False)
    assert v.outcome is Outcome.RECOMPILE and "// 2) == 1" in v.message, v.summary()


def test_a_wrong_graph_after_a_derived_size_recompile_is_still_found():
    v = runner.run_case(_half("tests.planted_extra:wrong_when_dynamic"), rerun=False)
    assert v.outcome is Outcome.DIVERGENCE, v.summary()


DDE = Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.COMPILE, call=0, exc_type="GuardOnDataDependentSymNode",
              message="Could not guard on data-dependent expression Eq(Min(1, u0), 0)")


def test_a_data_dependent_error_under_fullgraph_that_passes_without_it_is_by_design(monkeypatch):
    """A stand-in judge: the error comes only with fullgraph=True, as Dynamo's graph break takes it away."""
    seen, always = [], []

    def judged(p, check_strides, check_recompiles):
        seen.append(p.settings.fullgraph)
        return Verdict(**{**DDE.__dict__}) if p.settings.fullgraph or always else Verdict(outcome=Outcome.OK)

    monkeypatch.setattr(runner, "_run_once", judged)
    p = program([("relu", ["x0"], {})])
    p.settings.fullgraph = True
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.REJECTED and v.rule == "fullgraph-data-dependent" and seen == [True, False]
    always.append(True)  # the error without fullgraph too: a finding
    seen.clear()
    assert runner.run_case(p, rerun=False).outcome is Outcome.COMPILED_ERROR and seen == [True, False]
    p.settings.fullgraph = False  # an error without fullgraph is not re-judged
    seen.clear()
    assert runner.run_case(p, rerun=False).outcome is Outcome.COMPILED_ERROR and seen == [False]
    always.clear()
    monkeypatch.setattr(runner.expected, "REJUDGE", ())
    p.settings.fullgraph = True
    assert runner.run_case(p, rerun=False).outcome is Outcome.COMPILED_ERROR


def test_a_data_dependent_error_that_fullgraph_false_raises_too_is_still_found():
    p = program([("nonzero", ["x0"], {})], backend="tests.planted_extra:data_dependent_error")
    p.settings = RunSettings(backend="tests.planted_extra:data_dependent_error", fullgraph=True,
                             dynamo={"capture_dynamic_output_shape_ops": True})
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.COMPILED_ERROR and "GuardOnDataDependentSymNode" in v.exc_type, v.summary()


def _strided(layout, ops=(("relu", ["x0"], {}),)):
    x0 = TensorInput(name="x0", shape=["s0", 3], layout=layout, layout_dim=0)
    p = program(list(ops), inputs=[x0], sizes={"s0": [4, 6]}, backend="fuzz.planted:wrong_strides")
    p.settings = RunSettings(backend="fuzz.planted:wrong_strides")
    return p


def test_strides_of_an_output_computed_from_an_overlapping_input_are_not_judged(monkeypatch):
    p = _strided("expanded")  # x0 has stride 0 along dim 0: eager's relu picks its dim order by tie-breaking
    assert by_design.stride_exempt(p) == [0]
    assert runner.run_case(p, rerun=False).outcome is Outcome.OK
    monkeypatch.setattr(by_design, "stride_exempt", lambda p: [])
    assert runner.run_case(p, rerun=False).outcome is Outcome.STRIDE


def test_a_stride_bug_on_a_non_overlapping_input_is_still_found():
    p = _strided("contiguous")
    assert by_design.stride_exempt(p) == []
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.STRIDE and not v.numbers.get("unbacked_strides"), v.summary()


def _unbacked_rows():
    """x0[mask] with a mask keeping every row: (u0, 3), its row stride 3 and its rows unbacked."""
    x0 = TensorInput(name="x0", shape=["s0", 3])
    p = program([("mask_keep", ["x0"], {"keep": "all", "flat": False})], inputs=[x0], sizes={"s0": [4, 6]})
    p.settings = RunSettings(backend="fuzz.planted:wrong_strides", dynamo={"capture_dynamic_output_shape_ops": True})
    return p


def test_strides_holding_unbacked_symbols_are_one_tracked_class():
    p = _unbacked_rows()
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.STRIDE and v.numbers.get("unbacked_strides") == 1, v.summary()
    # one key as found and once shrunk, whatever ops showed it
    other = _strided("contiguous", ops=[("nonzero", ["x0"], {}), ("relu", ["v0"], {})])
    keys = {signature(v, p).key, minimal_signature(v, p).key, signature(v, other).key, minimal_signature(v, other).key}
    assert len(keys) == 1
    plain = Verdict(**{**v.__dict__, "numbers": {}})  # without the class: keyed by program, as other strides
    assert signature(plain, p).key not in keys and minimal_signature(plain, p).key not in keys
    assert not by_design.unbacked_dims(_strided("contiguous"), 0)
    # rows unbacked but outermost in both layouts: the strides hold no unbacked symbol
    assert by_design.unbacked_dims(p, 0) == {0}
    assert not by_design.unbacked_strides(p, 0, (5, 3, 2), (6, 1, 3), (6, 2, 1))
    assert by_design.unbacked_strides(p, 0, (5, 3), (1, 5), (3, 1))


# ---- indices: ties may pick any tied index --------------------------------------------------------

def test_indices_agree_is_tie_insensitive_and_finds_a_wrong_index():
    src = torch.tensor([[1, 5, 5, 0], [2, 2, 1, 0]])
    eager = src.argmax(dim=1)  # [1, 0]
    assert indices_agree("max", src, 1, False, torch.tensor([2, 1]), eager)  # the other tied maximum
    assert not indices_agree("max", src, 1, False, torch.tensor([3, 1]), eager)  # 0 is no maximum
    assert not indices_agree("max", src, 1, False, torch.tensor([9, 1]), eager)  # out of range
    assert indices_agree("min", src, None, False, torch.tensor(7), src.argmin())  # flattened: 0 at 3 and 7
    assert indices_agree("max", src, 1, True, torch.tensor([[2], [0]]), src.argmax(1, keepdim=True))
    order = torch.sort(src, dim=1, stable=True).indices
    swapped = order.clone()
    swapped[1, 2:] = order[1, 2:].flip(0)  # the two 2s of row 1 the other way round
    assert indices_agree("sort", src, 1, False, swapped, order)
    assert not indices_agree("sort", src, 1, False, order.flip(1), order)
    assert not indices_agree("sort", src, 1, False, torch.zeros_like(order), order)  # not a permutation


def _argmax_program():
    x0 = TensorInput(name="x0", shape=["s0", 4], dtype="int64")
    return program([("neg", ["x0"], {}), ("argmax", ["v0"], {"dim": 1, "keepdim": False})], inputs=[x0],
                   sizes={"s0": [3, 5]})


def test_an_index_output_that_picks_another_tied_value_passes(monkeypatch):
    from fuzz.program.interp import load

    p = _argmax_program()
    table, sources_program = by_design.index_table(p)
    assert table == {0: ("max", 1, False)} and sources_program.outputs == ["v0"]
    prog, sources = load(p), load(sources_program).program

    def last_tied(x0):  # argmax, but the last of tied maxima
        v = -x0
        return ((v.shape[1] - 1 - v.flip(1).argmax(1)),)

    def judge(compiled, **kw):
        return loop.run_schedule(compiled, prog.program, prog.make_inputs, prog.mark_inputs, p.calls, compare_outputs,
                                 check_strides=False, **kw)["status"]

    assert prog.make_inputs(0)[0].shape == (3, 4)  # randint(-8, 9) over rows of 4: ties are common
    untie = dict(index_outputs=table, index_sources=lambda *xs: dict(zip(table, sources(*xs))),
                 indices_agree=indices_agree)
    assert judge(last_tied) == loop.MISMATCH  # without the rule
    assert judge(last_tied, **untie) == loop.AGREE
    assert judge(lambda x0: ((-x0).argmin(1),), **untie) == loop.MISMATCH  # a wrong index is still found


def test_the_repro_of_an_index_program_judges_ties_as_the_runner_does(tmp_path):
    import subprocess
    import sys

    from fuzz.program.codegen import repro_source

    p = _argmax_program()
    p.settings = RunSettings(backend="eager")
    src = repro_source(p)
    assert "INDEX_OUTPUTS = {0: ('max', 1, False)}" in src and "index_sources=indexed" in src
    path = tmp_path / "repro.py"
    path.write_text(src)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "index_sources=indexed" not in repro_source(program([("relu", ["x0"], {})]))


@pytest.mark.parametrize("seed", [0])
def test_a_backend_that_only_rounds_is_never_flagged(seed):
    """fuzz.planted:one_ulp moves every floating output one ulp: a correct compiler's rounding."""
    from helpers import draw_programs

    flagged = []
    for p in draw_programs(12, seed=seed):
        p.settings.backend = "fuzz.planted:one_ulp"
        v = runner.run_case(p, rerun=False)
        if v.is_finding:
            flagged.append(v.summary())
    assert not flagged
