"""Programs the type checker accepts are programs eager runs, forward and backward: each case here is one
that pair-aimed draws made and eager refused (the `invalid` cases of a pair-aimed campaign)."""

import pytest
import torch

from fuzz.judge.loop import grads
from fuzz.program.interp import load
from fuzz.program.ir import OpCall, Program, ProgramError, RunSettings, TensorInput
from fuzz.program.opdb import OPS
from fuzz.program.typecheck import typecheck

from helpers import draw_programs


def _runs_in_eager(p: Program) -> None:
    """Every call forward, and backward where the program asks for gradients (as the judge's loop does)."""
    prog = load(p)
    for call in range(p.calls):
        xs = prog.make_inputs(call)
        out = prog.program(*xs)
        if p.settings.backward:
            grads(out, xs)


def _prog(inputs, ops, sizes, backward=False) -> Program:
    calls = [OpCall(op=o, args=a, params=q, out=f"v{i}") for i, (o, a, q) in enumerate(ops)]
    return Program(sizes=sizes, inputs=inputs, ops=calls, outputs=[calls[-1].out],
                   settings=RunSettings(backend="aot_eager", backward=backward))


def test_addmm_refuses_a_bias_the_product_would_broadcast_to():
    """torch.addmm(bias, a, b) broadcasts the bias to the product, never the product to the bias: a (s0, 3)
    bias of a (1, 3) product is refused by eager ("The expanded size of the tensor (1) must match")."""
    a = TensorInput(name="x0", shape=[1, "s0"])
    b = TensorInput(name="x1", shape=["s0", 3])
    bad = _prog([a, b], [("addmm", ["x0", "x1", "x1"], {"beta": 1, "alpha": 1})], {"s0": [4, 5, 6]})
    with pytest.raises(RuntimeError, match="expanded size"):
        torch.addmm(torch.ones(4, 3), torch.ones(1, 4), torch.ones(4, 3))
    with pytest.raises(ProgramError, match="bias"):
        typecheck(bad)
    bias = TensorInput(name="x2", shape=[3])
    good = _prog([a, b, bias], [("addmm", ["x0", "x1", "x2"], {"beta": 1, "alpha": 1})], {"s0": [4, 5, 6]})
    typecheck(good)
    _runs_in_eager(good)


def test_conv_refuses_an_empty_spatial_dim_even_padded():
    """Eager refuses a conv of an empty spatial dim whatever the padding ("Only zero batch or zero channel
    inputs are supported")."""
    x = TensorInput(name="x0", shape=[2, 3, 4, "s0"])
    params = {"kernel": 3, "stride": 1, "padding": 2, "dilation": 1, "groups": 1, "out": 1}
    bad = _prog([x], [("conv2d", ["x0"], params)], {"s0": [0, 5, 6]})
    with pytest.raises(RuntimeError, match="zero batch"):
        torch.nn.functional.conv2d(torch.ones(2, 3, 4, 0), torch.ones(1, 3, 3, 3), padding=2)
    with pytest.raises(ProgramError):
        typecheck(bad)
    assert not OPS["conv2d"].accepts(typecheck(_prog([x], [("relu", ["x0"], {})], {"s0": [0, 5, 6]}))["x0"])
    _runs_in_eager(_prog([x], [("conv2d", ["x0"], params)], {"s0": [1, 5, 6]}))


def test_group_norm_leaves_more_than_one_value_per_group():
    """F.group_norm refuses a group of one value ("Expected more than 1 value per channel when training"):
    a (1, 4) input in 4 groups."""
    x = TensorInput(name="x0", shape=["s0", 4])
    bad = _prog([x], [("group_norm", ["x0"], {"groups": 4})], {"s0": [3, 1, 2]})
    with pytest.raises(ValueError, match="more than 1 value"):
        torch.nn.functional.group_norm(torch.ones(1, 4), 4)
    with pytest.raises(ProgramError):
        typecheck(bad)
    _runs_in_eager(_prog([x], [("group_norm", ["x0"], {"groups": 2})], {"s0": [3, 1, 2]}))


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_reduce"])
def test_backward_scatters_take_an_index_as_long_as_the_dim(op):
    """Their src is x itself (or its flip): eager's backward refuses a src longer than the index
    ("ScatterBackward0 returned an invalid gradient"). Forward alone, a short index is fine."""
    x = TensorInput(name="x0", shape=[3, "s0"])
    params = {"dim": -1, "k": 1, "c": 0, "len": 2, **({"reduce": "sum", "include_self": True}
                                                       if op == "scatter_reduce" else {})}
    sizes = {"s0": [3, 4, 5]}
    _runs_in_eager(_prog([x], [(op, ["x0"], params)], sizes))
    bad = _prog([x], [(op, ["x0"], params)], sizes, backward=True)
    with pytest.raises(ProgramError, match="differentiate"):
        typecheck(bad)
    t = torch.randn(3, 4, requires_grad=True)
    index = torch.tensor([1, 2]).view(1, -1).expand(3, -1)
    made = {"scatter": lambda: torch.scatter(t, -1, index, t.flip(-1)),
            "scatter_add": lambda: torch.scatter_add(t, -1, index, t),
            "scatter_reduce": lambda: torch.scatter_reduce(t, -1, index, t.flip(-1), "sum")}[op]
    with pytest.raises(RuntimeError):
        made().sum().backward()
    good = _prog([x], [(op, ["x0"], {**params, "len": "dim"})], sizes, backward=True)
    typecheck(good)
    _runs_in_eager(good)


def test_drawn_backward_scatters_index_the_whole_dim():
    progs = draw_programs(60, seed=3, ops=["scatter", "scatter_add", "scatter_reduce", "relu"], backward_every=1)
    calls = [c for p in progs for c in p.ops if c.op.startswith("scatter")]
    assert len(calls) > 20
    assert all(c.params["len"] == "dim" for c in calls)


# The binary ops whose params have no empty default: one drawable value each.
_PARAMS = {"foreach_pair": {"fn": "add", "dim": -1, "at": 1}, "lerp": {"w": 0.5}}


@pytest.mark.parametrize("op", [o.name for o in OPS.family("binary")
                                if o.grad and o.arity == 2 and "float32" in o.dtypes])
def test_binary_ops_marked_differentiable_differentiate_in_eager(op):
    """floor_divide was marked differentiable, and backward programs drew it: "derivative for
    aten::floor_divide is not implemented"."""
    a, b = TensorInput(name="x0", shape=[3]), TensorInput(name="x1", shape=[3])
    p = _prog([a, b], [(op, ["x0", "x1"], _PARAMS.get(op, {}))], {"s0": [1, 2, 3]}, backward=True)
    typecheck(p)
    try:
        _runs_in_eager(p)
    except RuntimeError as e:
        assert "derivative" not in str(e), e
        raise


def test_floor_divide_is_not_drawn_in_backward_programs():
    from strategies.programs import op_menus

    _, grad_menu = op_menus(("binary",), None, "cpu")
    assert "floor_divide" not in {o.name for o in grad_menu["binary"]}
    menu, _ = op_menus(("binary",), None, "cpu")
    assert "floor_divide" in {o.name for o in menu["binary"]}
