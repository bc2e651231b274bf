"""The op forms of the list-of-tensors and strided-copy issue: the _foreach_ family (out of place and in place),
index_fill, lerp, 0-d tensors built in the program fed to scans and reductions, dtype= of scans and reductions,
bool arithmetic with a number, and in-place writes into unfolds with gaps (the overlap analysis). Each is
drawn, renders to plain torch, computes what torch computes, is refused when malformed, and its planted
backend is flagged where passthrough is not."""

import json

import pytest
import torch
from hypothesis import HealthCheck, given, settings

from fuzz.judge.runner import run_case
from fuzz.program.codegen import module_source
from fuzz.program.interp import load
from fuzz.program.ir import OpCall, Program, ProgramError, RunSettings, TensorInput
from fuzz.program.loading import load_program
from fuzz.program.short_repro import short_repro_source
from fuzz.program.symbolic import strides_overlap
from fuzz.program.typecheck import typecheck
from strategies import programs

S = {"s0": [3, 4, 5]}


def _prog(ops, inputs=None, outputs=None, backend="aot_eager") -> Program:
    inputs = inputs or [TensorInput(name="x0", shape=["s0", 4]), TensorInput(name="x1", shape=["s0", 4])]
    calls = [OpCall(op=o, args=a, params=q, out=f"v{i}") for i, (o, a, q) in enumerate(ops)]
    return Program(sizes=S, inputs=inputs, ops=calls, outputs=outputs or [calls[-1].out],
                   settings=RunSettings(backend=backend))


def _float_and_bool():
    return [TensorInput(name="x0", shape=["s0", 4]), TensorInput(name="x1", shape=["s0", 4], dtype="bool")]


# name: (program, its text in the generated code, what torch computes from the inputs)
FORMS = {
    "foreach": (_prog([("foreach", ["x0"], {"fn": "mul", "s": 2.0, "dim": -1, "at": 1})]),
                "torch._foreach_mul(torch.tensor_split(x0, (1,), dim=-1), 2.0)", lambda x, y: x * 2.0),
    "foreach_sqrt": (_prog([("foreach", ["x0"], {"fn": "sqrt", "dim": -2, "at": 2})]),
                     "torch._foreach_sqrt(torch._foreach_abs(", lambda x, y: x.abs().sqrt()),
    "foreach_": (_prog([("foreach_", ["x0"], {"fn": "add", "s": 2.0, "dim": -1, "at": 2})], outputs=["x0"]),
                 "torch._foreach_add_(torch.tensor_split(x0, (2,), dim=-1), 2.0)", lambda x, y: x + 2.0),
    "foreach_pair": (_prog([("foreach_pair", ["x0", "x1"], {"fn": "lerp", "w": 0.25, "dim": -1, "at": 1})]),
                     "torch._foreach_lerp(", lambda x, y: torch.lerp(x, y, 0.25)),
    "foreach_pair_": (_prog([("foreach_pair_", ["x0", "x1"], {"fn": "mul", "dim": -2, "at": 1})], outputs=["x0"]),
                      "torch._foreach_mul_(", lambda x, y: x * y),
    "index_fill": (_prog([("index_fill", ["x0"], {"dim": -1, "k": 2, "c": 1, "len": 2})]),
                   "x0.index_fill(-1, ", lambda x, y: x.index_fill(-1, torch.tensor([1, 3]), 2.5)),
    "index_fill_": (_prog([("index_fill_", ["x0"], {"dim": -1, "k": 1, "c": 0, "len": 1})], outputs=["x0"]),
                    "x0.index_fill_(-1, ", lambda x, y: x.index_fill(-1, torch.tensor([0]), 2.5)),
    "lerp": (_prog([("lerp", ["x0", "x1"], {"w": 1.5})]), "torch.lerp(x0, x1, 1.5)",
             lambda x, y: torch.lerp(x, y, 1.5)),
    "lerp_w": (_prog([("lerp_w", ["x0", "x1", "x1"], {})]), "torch.lerp(x0, x1, x1)",
               lambda x, y: torch.lerp(x, y, y)),
    "built_scan": (_prog([("built_scan", ["x0"], {"make": "full", "c": 2.5, "then": "cumsum"})]),
                   "torch.cumsum(torch.full((), 2.5, device=x0.device), 0)", lambda x, y: x + 2.5),
    "built_scan_0d": (_prog([("built_scan", ["x0"], {"make": "scalar_tensor", "c": -1.5, "then": "mean"})]),
                      "torch.mean(torch.scalar_tensor(-1.5, device=x0.device))", lambda x, y: x - 1.5),
    "cumsum_dtype": (_prog([("cumsum", ["x0"], {"dim": -1, "dtype": "float64"})]),
                     "torch.cumsum(x0, dim=-1, dtype=torch.float64)", lambda x, y: x.double().cumsum(-1)),
    "sum_dtype": (_prog([("sum", ["x0"], {"dim": -1, "keepdim": False, "dtype": "float64"})]),
                  "torch.sum(x0, dim=-1, dtype=torch.float64)", lambda x, y: x.double().sum(-1)),
    "softmax_dtype": (_prog([("softmax", ["x0"], {"dim": -2, "dtype": "float64"})]),
                      "F.softmax(x0, dim=-2, dtype=torch.float64)", lambda x, y: x.double().softmax(-2)),
    "bool_scalar": (_prog([("bool_scalar", ["x1"], {"fn": "add", "s": 2.0})], inputs=_float_and_bool()),
                    "(x1 + 2.0)", lambda x, y: y.float() + 2.0),
    "gapped_unfold_write": (
        _prog([("unfold", ["x0"], {"dim": -1, "size": 2, "step": 2}), ("add_scalar_", ["v0"], {"s": 1.0})],
              outputs=["x0"]), "x0.unfold(-1, 2, 2)", lambda x, y: x + 1.0),
}


@pytest.mark.parametrize("name", list(FORMS))
def test_each_form_renders_as_plain_torch_and_computes_what_torch_does(name):
    p, text, expected = FORMS[name]
    typecheck(p)
    assert text in module_source(p)
    loaded = load(p)
    for call in range(p.calls):
        x, y = loaded.make_inputs(call)
        want = expected(x.clone(), y.clone())
        got = loaded.program(x, y)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want)


def test_strides_overlap_is_the_sorted_strides_test():
    assert not strides_overlap((3, 2), (2, 1))  # unfold(size 2, step 2): gaps, no element twice
    assert not strides_overlap((3, 2), (3, 1))
    assert strides_overlap((3, 2), (1, 1))  # step 1 < size 2: windows share elements
    assert strides_overlap((4,), (0,))  # an expanded dim
    assert not strides_overlap((1, 5), (0, 1))  # a dim of size 1 addresses nothing twice


def test_a_gapped_unfold_takes_an_in_place_write_and_an_overlapping_one_does_not():
    typecheck(FORMS["gapped_unfold_write"][0])
    overlapping = _prog([("unfold", ["x0"], {"dim": -1, "size": 2, "step": 1}), ("add_scalar_", ["v0"], {"s": 1.0})],
                        outputs=["x0"])
    with pytest.raises(ProgramError, match="self-overlapping"):
        typecheck(overlapping)
    # a window as long as its dim is the only one at every call: step 1 overlaps nothing there
    assert not typecheck(_prog([("unfold", ["x0"], {"dim": -1, "size": 4, "step": 1})]))["v0"].overlapping


def _with(name, op_index, **params) -> dict:
    d = json.loads(FORMS[name][0].to_json())
    d["ops"][op_index]["params"].update(params)
    return d


@pytest.mark.parametrize("name,index,params,match", [
    ("foreach", 0, {"fn": "exp_"}, "foreach fn"),
    ("foreach", 0, {"s": True}, "scalar s"),
    ("foreach", 0, {"at": 0}, "split at"),
    ("foreach_sqrt", 0, {"s": 2.0}, "takes no scalar"),
    ("foreach_pair", 0, {"w": "half"}, "weight"),
    ("foreach_pair_", 0, {"fn": "sub"}, "foreach pair fn"),
    ("built_scan", 0, {"make": "eval"}, "built 0-d"),
    ("built_scan", 0, {"c": 7}, "constant c"),
    ("cumsum_dtype", 0, {"dtype": "int8"}, "dtype="),
    ("sum_dtype", 0, {"dtype": None}, "dtype="),
    ("softmax_dtype", 0, {"dtype": "int64"}, "dtype="),
    ("bool_scalar", 0, {"s": 1}, "bool_scalar takes"),
    ("bool_scalar", 0, {"fn": "sub"}, "eager raises: Subtraction"),
    ("lerp", 0, {"w": 2}, "lerp weight"),
    ("gapped_unfold_write", 0, {"step": 0}, "step"),
])
def test_loading_refuses_malformed_new_fields(name, index, params, match):
    with pytest.raises(ProgramError, match=match):
        load_program(_with(name, index, **params))


def test_loading_refuses_params_the_new_ops_do_not_take():
    with pytest.raises(ProgramError, match="unknown param"):
        load_program(_with("lerp_w", 0, w=0.5))


_NEW = ("foreach", "foreach_", "foreach_pair", "foreach_pair_", "index_fill", "index_fill_", "lerp", "lerp_w",
        "built_scan", "bool_scalar")


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(programs(backend="aot_eager", device="cpu", ops=list(_NEW), max_ops=3))
def test_drawn_programs_with_the_new_ops_type_check_and_render(p):
    typecheck(p)
    assert any(c.op in _NEW for c in p.ops)
    src = module_source(p)
    compile(src, "<drawn>", "exec")
    assert "torch." in src


def _on(p: Program, backend: str) -> Program:
    q = Program.from_dict(json.loads(p.to_json()))
    q.settings.backend = backend
    return q


def test_the_generator_draws_in_place_writes_into_gapped_unfolds():
    from hypothesis import Phase, find

    from helpers import script_module

    written = script_module("reach").REACH["an in-place write into an unfold with gaps (step >= size)"][1]
    p = find(programs(backend="aot_eager", device="cpu", ops=["unfold", "add_scalar_"], max_ops=2), written,
             settings=settings(max_examples=400, database=None, phases=[Phase.generate],
                               suppress_health_check=list(HealthCheck)))
    typecheck(p)


PLANTS = {
    "wrong_on_foreach": "foreach_pair", "wrong_on_index_fill": "index_fill_", "wrong_on_lerp": "lerp",
    "wrong_on_scalar_tensor_scan": "built_scan", "wrong_on_reduction_dtype": "cumsum_dtype",
    "wrong_on_gapped_unfold_write": "gapped_unfold_write",
}


@pytest.mark.parametrize("plant", list(PLANTS))
def test_a_plant_is_flagged_on_its_form_and_its_short_repro_prints_it(plant):
    p = _on(FORMS[PLANTS[plant]][0], f"fuzz.planted:{plant}")
    text = FORMS[PLANTS[plant]][1]
    v = run_case(p, rerun=False)
    assert v.outcome.is_finding, v
    assert text in short_repro_source(p, v)
    other = _on(FORMS["bool_scalar"][0], f"fuzz.planted:{plant}")  # no form: the plant is passthrough there
    assert not run_case(other, rerun=False).outcome.is_finding


def test_passthrough_is_not_flagged_on_the_forms():
    for name in PLANTS.values():
        assert not run_case(_on(FORMS[name][0], "fuzz.planted:passthrough"), rerun=False).outcome.is_finding, name
