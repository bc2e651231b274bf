"""The aliasing contract: each output shares storage with the inputs (and earlier outputs) eager's does,
by position, an empty tensor never counting; a mismatch is an aliasing-mismatch finding with a signature,
a title and a short repro; an op that may return a view or a copy is by design."""

import pytest
import torch

from fuzz.judge import by_design
from fuzz.judge.loop import ALIASING, AGREE, alias_of, describe, run_schedule
from fuzz.judge.compare import compare_outputs
from fuzz.judge.runner import run_case
from fuzz.judge.verdict import Outcome
from fuzz.program.ir import RunSettings

from helpers import program


def test_alias_of_names_inputs_and_outputs_by_position_and_skips_empty_tensors():
    x, y = torch.ones(4), torch.ones(3)
    empty = torch.ones(0)
    out = (x + 0, x[1:], y.view(3), x[1:].t(), empty, empty[:0])
    assert alias_of(out, [y, x, empty]) == [None, ("input", 1), ("input", 0), ("input", 1), None, None]
    fresh = torch.ones(5)
    assert alias_of((fresh, fresh[2:]), [x]) == [None, ("output", 0)]


def _schedule(compiled, program, calls=2, **kw):
    make = lambda call, fp64=False: [torch.arange(4.0, dtype=torch.float64 if fp64 else torch.float32)]  # noqa: E731
    return run_schedule(compiled, program, make, lambda *xs: None, calls, compare_outputs, **kw)


def test_the_loop_flags_an_output_that_is_an_input_only_one_side():
    r = _schedule(lambda x: (x,), lambda x: (x + 0,))  # compiled hands back the input itself
    assert r["status"] == ALIASING and r["aliasing"] == (0, ("input", 0), None)
    lines, failed = describe(r, [{}, {}])
    assert failed and "input 0's storage compiled, a fresh tensor eager" in lines[0]
    r = _schedule(lambda x: (x[1:].clone(),), lambda x: (x[1:],))  # eager's view, compiled's copy
    assert r["status"] == ALIASING and r["aliasing"] == (0, None, ("input", 0))
    assert _schedule(lambda x: (x[1:],), lambda x: (x[1:],))["status"] == AGREE
    assert _schedule(lambda x: (x,), lambda x: (x + 0,), alias_exempt=(0,))["status"] == AGREE
    # an empty output shares nothing that matters
    assert _schedule(lambda x: (x[:0],), lambda x: (x[:0] + 0,))["status"] == AGREE


def _cumsum(backend):
    """cumsum along a dim of size 1: the input's values, shape, strides and dtype, in a tensor of its own."""
    p = program([("cumsum", ["x0"], {"dim": -1})], shape=["s0", 1], sizes={"s0": [3, 5, 7]},
                marks=["dynamic", "static"])
    p.settings = RunSettings(backend=backend)
    return p


def test_a_backend_that_returns_the_input_is_an_aliasing_finding_with_signature_and_title():
    from fuzz.findings.report.title import report_title
    from fuzz.findings.signature import minimal_signature, signature

    p = _cumsum("fuzz.planted:returns_input_as_output")
    v = run_case(p)
    assert v.outcome is Outcome.ALIASING and v.is_finding and v.call == 0 and v.where == "output 0 (v0)"
    assert v.message == "compiled returns input x0's storage, eager a fresh tensor"
    assert signature(v, p).text.startswith("aliasing-mismatch | output")
    assert minimal_signature(v, p).text.startswith("aliasing-mismatch | output")
    assert "shares storage" in report_title(p, v)
    for stock in ("fuzz.planted:passthrough", "eager", "aot_eager"):
        assert run_case(_cumsum(stock)).outcome is Outcome.OK, stock


def test_the_short_repro_checks_which_input_the_output_shares_storage_with():
    from fuzz.program.short_repro import check_short_repro, short_repro_source

    p = _cumsum("fuzz.planted:returns_input_as_output")
    v = run_case(p)
    src = short_repro_source(p, v)
    assert "untyped_storage().data_ptr()" in src
    ok, shown, _ = check_short_repro(src, v)
    assert ok, shown
    ok, shown, _ = check_short_repro(short_repro_source(_cumsum("aot_eager"), v), v)
    assert not ok and "passed" in shown


@pytest.mark.parametrize("op, params", [("reshape", {"keep": 0}), ("contiguous", {})])
def test_an_op_that_may_return_a_view_or_a_copy_is_not_judged(op, params):
    p = program([(op, ["x0"], params), ("relu", ["x0"], {})], shape=["s0", 3], outputs=["v0", "v1"])
    assert by_design.alias_exempt(p) == [0]
