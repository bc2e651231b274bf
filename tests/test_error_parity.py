"""Error parity: where eager raises an op's contract error, the compiled function must raise as well, an
error of the same class. Returning a value is an eager-only-error finding; raising another class a
compiled-only-error naming eager's class; the same class is an invalid program. The generator draws such
programs (eager_rejects) at a small share only."""

import pytest
import torch

from fuzz.judge import loop
from fuzz.judge.compare import compare_outputs
from fuzz.judge.runner import run_case
from fuzz.judge.verdict import Outcome
from fuzz.program.ir import RunSettings
from fuzz.program.ops.contract import WAYS

from helpers import draw_programs, program


def _rejects(way, backend):
    p = program([("eager_rejects", ["x0"], {"way": way}), ("relu", ["v0"], {})], shape=["s0", 2],
                sizes={"s0": [3, 5, 7]}, marks=["dynamic", "static"])
    p.settings = RunSettings(backend=backend)
    return p


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_compiled_function_that_returns_where_eager_raises_is_a_finding(way):
    v = run_case(_rejects(way, "fuzz.planted:accepts_what_eager_rejects"))
    assert v.outcome is Outcome.EAGER_ERROR and v.is_finding and v.call == 0
    assert v.exc_type in ("NotImplementedError", "RuntimeError")
    for stock in ("fuzz.planted:passthrough", "eager"):  # raise as eager does: an invalid program, no finding
        assert run_case(_rejects(way, stock)).outcome is Outcome.INVALID, stock


def _both_raise(eager_exc, compiled_exc):
    def raises(exc):
        def f(x):
            raise exc("contract")
        return f
    make = lambda call, fp64=False: [torch.ones(3)]  # noqa: E731
    return loop.run_schedule(raises(compiled_exc), raises(eager_exc), make, lambda *xs: None, 2, compare_outputs)


def test_errors_of_two_classes_are_a_finding_and_of_one_class_an_invalid_program():
    assert _both_raise(RuntimeError, RuntimeError)["status"] == loop.BOTH_ERROR
    r = _both_raise(RuntimeError, IndexError)
    assert r["status"] == loop.ERROR_CLASS
    lines, failed = loop.describe(r, [{}, {}])
    assert failed and "compiled raised IndexError" in lines[0] and "eager raised RuntimeError" in lines[0]


def test_a_wrapped_compiled_error_is_judged_by_the_error_it_wraps():
    try:
        try:
            raise NotImplementedError("not implemented for 'Float'")
        except NotImplementedError as inner:
            raise TypeError("the backend failed") from inner
    except TypeError as outer:
        wrapped = outer
    assert loop._error_status(NotImplementedError("x"), wrapped) == loop.BOTH_ERROR


def test_the_runner_names_eager_s_class_and_lets_a_compiler_refusal_stand_invalid():
    from fuzz.judge.runner import _verdict

    p = _rejects("bool_sub", "aot_eager")
    r = dict(status=loop.ERROR_CLASS, call=0, eager_error=RuntimeError("eager's"),
             compiled_error=IndexError("index is out of bounds"))
    v = _verdict(p, r)
    assert v.outcome is Outcome.COMPILED_ERROR and v.exc_type == "IndexError"
    assert v.where == "eager raises RuntimeError" and v.numbers["eager_error"] == 1
    class Unsupported(Exception):  # by its class name, as the rules read it
        pass

    p.settings.fullgraph = True  # a graph break under fullgraph=True is a refusal by design
    refusal = _verdict(p, dict(r, compiled_error=Unsupported("graph break")))
    assert refusal.outcome is Outcome.INVALID and refusal.rule == "fullgraph-graph-break"


def test_programs_eager_refuses_on_purpose_are_a_small_share_of_forward_programs():
    progs = draw_programs(400, seed=11, backend="aot_eager", max_ops=3)
    rejecting = [p for p in progs if any(c.op == "eager_rejects" for c in p.ops)]
    assert 2 <= len(rejecting) <= 32  # one in 32 forward programs, about 3%
    assert not any(p.settings.backward for p in rejecting)
    assert all(p.ops[-1].op == "eager_rejects" or any(c.op == "eager_rejects" for c in p.ops) for p in rejecting)
    named = draw_programs(60, seed=11, backend="aot_eager", ops=["mm", "relu"], max_ops=2)
    assert not any(c.op == "eager_rejects" for p in named for c in p.ops)


def test_the_reach_row_counts_programs_that_break_a_contract_on_purpose():
    from helpers import script_module

    row = script_module("reach").REACH["an op eager refuses on purpose (eager_rejects: bool minus bool, softmax of an "
                                       "int, ...)"][1]
    assert row(_rejects(sorted(WAYS)[0], "aot_eager")) and not row(program([("relu", ["x0"], {})], shape=["s0", 2]))
