"""scripts/reach.py's rows detect what they name: each row of the rare conjunctions holds for a hand-made
program that has its conjunction, and not for one that lacks a part of it (docs/generator.md's reach
table counts them)."""

import pytest

from fuzz.program.ir import OpCall, Program, RunSettings, TensorInput
from fuzz.program.step_ir import Block, Step, StepProgram

from helpers import script_module

reach = script_module("reach")


def _prog(inputs, ops, sizes, outputs=None, backward=False) -> Program:
    calls = [OpCall(op=o, args=a, params=q, out=f"v{i}") for i, (o, a, q) in enumerate(ops)]
    return Program(sizes=sizes, inputs=inputs, ops=calls, outputs=outputs or [calls[-1].out],
                   settings=RunSettings(backend="aot_eager", backward=backward))


def _x(name, shape, dtype="float32", **kw) -> TensorInput:
    return TensorInput(name=name, shape=list(shape), dtype=dtype, **kw)


S = {"s0": [3, 4, 5]}
WRITE = ("add_scalar_", ["x0"], {"s": 1})


CASES = {
    # name: (a program that has it, one that lacks a part)
    "a size-changing view(dtype) of a computed value, returned, after a write to its source input": (
        _prog([_x("x0", ["s0", 4], "int32")],
              [WRITE, ("abs", ["x0"], {}), ("view_dtype", ["v1"], {"to": "int8"})], S, ["v0", "v2"]),
        # the view comes before the write
        _prog([_x("x0", ["s0", 4], "int32")],
              [("abs", ["x0"], {}), ("view_dtype", ["v0"], {"to": "int8"}), WRITE], S, ["v1", "v2"])),
    "aliasing that flips between two calls of the same sizes, one member written, the other read": (
        _prog([_x("x0", ["s0"]), _x("x1", ["s0"], alias={"of": "x0", "view": "same", "calls": [True, False, True]})],
              [WRITE, ("relu", ["x1"], {})], {"s0": [3, 3, 4]}, ["v0", "v1"]),
        # the flip comes with new sizes
        _prog([_x("x0", ["s0"]), _x("x1", ["s0"], alias={"of": "x0", "view": "same", "calls": [True, False, True]})],
              [WRITE, ("relu", ["x1"], {})], {"s0": [3, 4, 5]}, ["v0", "v1"])),
    "a write to the base of an alias pair, then a view of its offset member returned": (
        _prog([_x("x0", [4, "s0"]),
               _x("x1", [2, "s0"], alias={"of": "x0", "view": "narrow", "dim": 0, "start": 1, "length": 2})],
              [WRITE, ("transpose", ["x1"], {"dims": [0, 1]})], S, ["v0", "v1"]),
        # the view is of the base
        _prog([_x("x0", [4, "s0"]),
               _x("x1", [2, "s0"], alias={"of": "x0", "view": "narrow", "dim": 0, "start": 1, "length": 2})],
              [WRITE, ("transpose", ["x0"], {"dims": [0, 1]})], S, ["v0", "v1"])),
    "a constant pad that only shrinks (widths <= 0) of a computed 2-d value, read by matrix products only": (
        _prog([_x("x0", ["s0", 4])],
              [("relu", ["x0"], {}), ("pad", ["v0"], {"mode": "constant", "pad": [-1, 0, 0, -1], "value": 0.0}),
               ("gram", ["v1"], {})], S),
        # a shift (-1, +1) grows as much as it crops
        _prog([_x("x0", ["s0", 4])],
              [("relu", ["x0"], {}), ("pad", ["v0"], {"mode": "constant", "pad": [-1, 1, 0, -1], "value": 0.0}),
               ("gram", ["v1"], {})], S)),
    "eval-mode batch_norm upstream of such a shrinking crop": (
        _prog([_x("x0", ["s0", 4])],
              [("batch_norm", ["x0"], {"training": False, "affine": False}),
               ("pad", ["v0"], {"mode": "constant", "pad": [-1, 0, 0, -1], "value": 0.0}), ("gram", ["v1"], {})], S),
        # the batch_norm is beside the crop, not upstream of it
        _prog([_x("x0", ["s0", 4])],
              [("batch_norm", ["x0"], {"training": False, "affine": False}), ("relu", ["x0"], {}),
               ("pad", ["v1"], {"mode": "constant", "pad": [-1, 0, 0, -1], "value": 0.0}), ("gram", ["v2"], {})], S,
              ["v0", "v3"])),
    "a binary op of a permuted first and a dense second operand, returned": (
        _prog([_x("x0", ["s0", 4], layout="permuted", perm=[1, 0]), _x("x1", ["s0", 4])],
              [("mul", ["x0", "x1"], {})], S),
        _prog([_x("x0", ["s0", 4]), _x("x1", ["s0", 4], layout="permuted", perm=[1, 0])],
              [("mul", ["x0", "x1"], {})], S)),
    "a binary op of two floating dtypes (mixed precision)": (
        _prog([_x("x0", ["s0"], "float16"), _x("x1", ["s0"])], [("add", ["x0", "x1"], {})], S),
        _prog([_x("x0", ["s0"], "float16"), _x("x1", ["s0"])],
              [("add", ["x0", "x0"], {}), ("relu", ["x1"], {})], S, ["v0", "v1"])),
    "a binary op with a bool first operand and a number second (promoted)": (
        _prog([_x("x0", ["s0"], "bool"), _x("x1", ["s0"])], [("add", ["x0", "x1"], {})], S),
        _prog([_x("x0", ["s0"], "bool"), _x("x1", ["s0"])], [("add", ["x1", "x0"], {})], S)),
    "an integer batched product with batch and row dims 1 (CPU)": (
        _prog([_x("x0", ["s0", "s0", 3], "int32"), _x("x1", ["s0", 3, 2], "int32")],
              [("bmm_int", ["x0", "x1"], {})], {"s0": [2, 1, 3]}),
        _prog([_x("x0", ["s0", "s0", 3], "int32"), _x("x1", ["s0", 3, 2], "int32")],
              [("bmm_int", ["x0", "x1"], {})], {"s0": [2, 3, 4]})),
    "a reflect or replicate pad of a permuted or channels_last 4-d value": (
        _prog([_x("x0", [2, 3, "s0", 4], layout="channels_last")],
              [("pad", ["x0"], {"mode": "reflect", "pad": [1, 1, 1, 1]})], S),
        _prog([_x("x0", [2, 3, "s0", 4])], [("pad", ["x0"], {"mode": "reflect", "pad": [1, 1, 1, 1]})], S)),
    "index_select or gather of a pointwise result over a permuted view, returned": (
        _prog([_x("x0", ["s0", 4])],
              [("transpose", ["x0"], {"dims": [0, 1]}), ("relu", ["v0"], {}),
               ("index_select", ["v1"], {"dim": -1, "k": 1, "c": 0, "len": "dim"})], S),
        # no pointwise op between the permuted view and the index
        _prog([_x("x0", ["s0", 4])],
              [("transpose", ["x0"], {"dims": [0, 1]}),
               ("index_select", ["v0"], {"dim": -1, "k": 1, "c": 0, "len": "dim"})], S)),
    "backward: an in-place write to a clone or to a view autograd saves nothing of": (
        _prog([_x("x0", ["s0", 4])], [("clone", ["x0"], {"memory_format": "preserve"}), ("relu_", ["v0"], {})],
              S, backward=True),
        _prog([_x("x0", ["s0", 4])], [("clone", ["x0"], {"memory_format": "preserve"}), ("relu", ["v0"], {})],
              S, backward=True)),
    "backward: an op eager does not differentiate (an item()-valued fill)": (
        _prog([_x("x0", ["s0", 4])], [("item_full", ["x0"], {"make": "full", "via": "item"})], S, backward=True),
        _prog([_x("x0", ["s0", 4])], [("relu", ["x0"], {})], S, backward=True)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_row_holds_for_a_program_with_its_conjunction_only(name):
    applies, has = reach.REACH[name]
    with_it, without = CASES[name]
    assert applies(with_it) and has(with_it)
    assert applies(without) and not has(without)


def test_every_conjunction_row_has_a_case():
    rows = list(reach.REACH)
    first = rows.index(next(iter(CASES)))
    assert set(rows[first:first + len(CASES)]) == set(CASES)  # the conjunctions' block (the next block follows)


def _steps(*steps) -> StepProgram:
    return StepProgram(blocks=[Block(steps=list(steps))])


def test_the_step_row_holds_for_a_refused_write_through_an_expanded_view():
    applies, has = reach.STEP_REACH["a write eager refuses (add_, copy_, ...) through an expanded view"]
    small = Step("full", [], {"shape": [1, 3], "value": 1}, "t0")
    expanded = Step("expand", ["t0"], {"shape": [4, 3]}, "t1")
    refused = _steps(small, expanded, Step("add_", ["t1"], {"other": 1}))
    allowed = _steps(small, expanded, Step("fill_", ["t1"], {"other": 2}))
    assert applies(refused) and has(refused)
    assert applies(allowed) and not has(allowed)
    assert not applies(_steps(small, Step("add_", ["t0"], {"other": 1})))
