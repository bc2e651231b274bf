"""A difference that rounding decides is no bug: outputs that differ from eager's only through a
discontinuous op (a comparison, a rounding, a data-dependent size) on computed floats that compiled
computes no further from float64 than eager pass, by design (rejected, named, counted); a value moved far
across a threshold, or an element dropped after it, is still found, and the report names the value."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from fuzz.judge import by_design, runner
from fuzz.judge.compare import compare_tensor, value_agrees
from fuzz.judge.verdict import Outcome
from fuzz.program.ir import RunSettings, TensorInput

from helpers import program

# (x0 * 3) / 3 in bfloat16: eager rounds twice, and some elements land one ulp from x0; in float64 it is x0.
THIRDS = [("mul_scalar", ["x0"], {"s": 3.0}), ("div_scalar", ["v0"], {"s": 3.0})]
EQUAL = THIRDS + [("eq", ["v1", "x0"], {}), ("masked_select", ["v2"], {})]  # masked_select(v2, v2): v1 == x0
DIFFERENCE = THIRDS + [("sub", ["v1", "x0"], {}), ("masked_select", ["v2"], {})]  # its elements > 0


def _bf16(ops, backend, in_graph=False):
    p = program(ops, dtype="bfloat16", sizes={"s0": [16, 32]})
    # in_graph: masked_select inside the graph (else Dynamo breaks the graph there and eager runs it)
    p.settings = RunSettings(backend=f"fuzz.planted:{backend}",
                             dynamo={"capture_dynamic_output_shape_ops": True} if in_graph else {})
    return p


def test_rounding_edges_are_the_computed_floats_a_discontinuous_op_reads():
    p = program(EQUAL, dtype="bfloat16")
    assert by_design.rounding_edges(p) == (["v1"], {0: [0]})  # x0, an input, is no edge: its bits are fixed
    q = by_design.edges_program(p, ["v1"])
    assert [c.op for c in q.ops] == ["mul_scalar", "div_scalar"] and q.outputs == ["v1"]
    two = program(THIRDS + [("relu", ["x0"], {}), ("floor", ["v1"], {})], outputs=["v2", "v3"])
    assert by_design.rounding_edges(two) == (["v1"], {1: [0]})  # relu reads x0 continuously
    ints = program([("neg", ["x0"], {}), ("masked_select", ["v0"], {})], dtype="int64")
    assert by_design.rounding_edges(ints) == ([], {})  # integers round nothing
    written = program(THIRDS + [("relu_", ["v1"], {}), ("masked_select", ["v1"], {})])
    assert by_design.rounding_edges(written) == ([], {})  # a write to its storage would bypass the replay


def test_value_agrees_judges_each_element_that_differs_beyond_the_tolerance():
    torch.manual_seed(0)
    ref = torch.randn(1000, dtype=torch.float64)
    eager = (ref + 0.01 * torch.randn(1000, dtype=torch.float64)).bfloat16()
    closer = ref.bfloat16()
    assert value_agrees(closer, eager, ref) is None
    one_off = closer.clone()
    one_off[3] += 0.3  # one element far off: the RMS error hides it, the element rule does not
    assert compare_tensor(one_off, eager, ref) is None
    kind, detail = value_agrees(one_off, eager, ref)
    assert kind == "values" and detail["elements"] == 1 and detail["compiled"] == one_off[3].item()
    sign = torch.tensor([0.0052, 1.0]).bfloat16(), torch.tensor([-0.0368, 1.0], dtype=torch.float64)
    assert value_agrees(torch.tensor([-0.0369, 1.0]).bfloat16(), *sign) is None  # across 0, as float64 is


@pytest.mark.parametrize("ops", [EQUAL, DIFFERENCE], ids=["eq", "sub"])
def test_a_threshold_that_rounding_decides_is_by_design(monkeypatch, ops):
    """fuzz.planted:float64_inside rounds each value once from float64: where eager's v1 is one ulp off x0,
    compiled is on the float64 side of the threshold, and masked_select keeps another count."""
    p = _bf16(ops, "float64_inside")
    from fuzz.program.interp import load

    prog = load(p)
    x0 = prog.make_inputs(0)[0]
    v1 = (x0 * 3.0) / 3.0
    moved = v1 != x0
    assert moved.any() and torch.equal(torch.nextafter(x0, v1)[moved], v1[moved])  # one ulp, where it moved
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.REJECTED and v.rule == by_design.ROUNDING_RULE and v.call == 0, v.summary()
    assert f"through {'v2' if ops is DIFFERENCE else 'v1'}," in v.message, v.message
    monkeypatch.setattr(by_design, "rounding_edges", lambda p: ([], {}))  # without the rule: a finding
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.SHAPE, v.summary()


def test_a_value_moved_far_across_a_threshold_is_found_and_named(monkeypatch):
    p = _bf16(DIFFERENCE, "moves_subtraction")
    v = runner.run_case(p, rerun=False)
    assert v.is_finding and v.where == "output 0 (v3)", v.summary()
    assert "it comes through v2, which torch.masked_select reads: compiled v2 is further from a float64 run" \
        in v.message, v.message
    from fuzz.findings.report.outcome import expected_actual

    assert "It comes through `v2`, which torch.masked\\_select reads" in expected_actual(p, v)[1]
    monkeypatch.setattr(runner, "value_agrees", lambda *a: None)  # an edge rule blind to how far: passed
    assert runner.run_case(p, rerun=False).outcome is Outcome.REJECTED


def test_an_element_masked_select_drops_is_found():
    """Its edge v1 is right (float64_inside), and eager's masked_select of it keeps what compiled drops."""
    v = runner.run_case(_bf16(EQUAL, "drops_selected", in_graph=True), rerun=False)
    assert v.outcome is Outcome.SHAPE and "through" not in v.message, v.summary()


def test_the_repro_of_a_rounding_case_judges_as_the_runner_does(tmp_path, capsys):
    """A repro of a by-design case runs standalone and claims no bug; one of a value moved far names it."""
    import runpy

    from fuzz.program.codegen import repro_source

    src = repro_source(_bf16(EQUAL, "float64_inside"))
    assert "rounding=rounding" in src and "def replayed(x0, edges):" in src
    path = tmp_path / "by_design.py"
    path.write_text(src)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)))
    assert r.returncode == 0 and "rounding decides, not a bug" in r.stdout, r.stdout + r.stderr
    path = tmp_path / "found.py"
    path.write_text(repro_source(_bf16(DIFFERENCE, "moves_subtraction")))
    with pytest.raises(SystemExit) as done:  # in this process: a second standalone run would say nothing new
        runpy.run_path(str(path), run_name="__main__")
    assert done.value.code == 1 and "it comes through v2" in capsys.readouterr().out
    assert "rounding=rounding" not in repro_source(program([("relu", ["x0"], {})]))


def test_stats_count_the_rejected_by_rule(tmp_path):
    from fuzz.campaign.state import CampaignState

    st = CampaignState.open(str(tmp_path / "st"), {"seed": 1})
    st.record_case(0, {"outcome": "rejected", "rule": by_design.ROUNDING_RULE}, 1.0)
    st.record_case(1, {"outcome": "ok"}, 1.0)
    assert st.summary()["rejected_by_rule"] == {by_design.ROUNDING_RULE: 1}
    st.close()
    assert CampaignState.load_summary(str(tmp_path / "st"))["rejected_by_rule"] == {by_design.ROUNDING_RULE: 1}


def test_inputs_compared_directly_need_no_rule():
    """A threshold on an input reads the same bits eager reads: no edge, nothing to excuse."""
    x0 = TensorInput(name="x0", shape=["s0"], dtype="bfloat16")
    p = program([("masked_select", ["x0"], {})], inputs=[x0], sizes={"s0": [16, 32]})
    assert by_design.rounding_edges(p) == ([], {})
    p.settings = RunSettings(backend="fuzz.planted:drops_selected", dynamo={"capture_dynamic_output_shape_ops": True})
    assert runner.run_case(p, rerun=False).outcome is Outcome.SHAPE


def test_a_short_repro_checks_a_program_with_thresholds_at_its_failing_call_only():
    """The judge passes a call that differs only where rounding decides and judges on; the short repro's
    loop must not fail at such a call either."""
    from fuzz.judge.verdict import Verdict
    from fuzz.program.short_repro import short_repro_source

    shape = Verdict(outcome=Outcome.SHAPE, call=1, where="output 0 (v3)")
    src = short_repro_source(_bf16(EQUAL, "drops_selected", in_graph=True), shape)
    assert "    if call == 1:\n        torch.testing.assert_close(actual[0]" in src, src
    plain = short_repro_source(program([("relu", ["x0"], {})], sizes={"s0": [3, 4]}),
                               Verdict(outcome=Outcome.DIVERGENCE, call=1, where="output 0 (v0)"))
    assert "if call ==" not in plain and "    torch.testing.assert_close" in plain
