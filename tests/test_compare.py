"""The comparison rule on hand-made tensors."""

import pytest
import torch

from fuzz.judge.compare import compare_outputs, compare_tensor


def test_equal_and_allclose_pass():
    x = torch.randn(5)
    assert compare_tensor(x, x.clone(), x.double()) is None
    assert compare_tensor(x + 1e-7, x, x.double()) is None


def test_fp64_rule_excuses_compiled_when_closer_to_fp64():
    ref = torch.linspace(0, 1, 50, dtype=torch.float64)
    eager = (ref + 0.01).half()  # eager is off by 0.01
    compiled = (ref + 0.005).half()  # compiled is closer to the truth
    assert compare_tensor(compiled, eager, ref) is None


def test_fp64_rule_flags_compiled_far_from_fp64():
    ref = torch.linspace(0, 1, 50, dtype=torch.float64)
    eager = ref.float()
    compiled = eager.clone()
    compiled[3] += 0.5
    kind, detail = compare_tensor(compiled, eager, ref)
    assert kind == "values" and detail["max_abs"] == pytest.approx(0.5)
    assert detail["compiled_vs_fp64"] > detail["eager_vs_fp64"]


def test_integers_and_bools_are_exact():
    a = torch.arange(6)
    b = a.clone()
    b[2] += 1
    assert compare_tensor(a, b, a)[0] == "values"
    assert compare_tensor(a > 2, b > 2, None)[0] == "values"
    assert compare_tensor(a > 3, b > 3, None) is None


def test_nonfinite_positions_must_agree():
    e = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare_tensor(e.clone(), e, e.double()) is None
    c = torch.tensor([1.0, 2.0, float("inf")])
    assert compare_tensor(c, e, e.double())[0] == "nonfinite"
    c = torch.tensor([1.0, float("nan"), float("-inf")])
    assert compare_tensor(c, e, e.double())[0] == "nonfinite"


def test_nonfinite_matching_fp64_is_excused():
    # eager overflows in float16 where the true value fits; compiled matches fp64
    ref = torch.tensor([1.0, 60000.0], dtype=torch.float64)
    eager = torch.tensor([1.0, float("inf")], dtype=torch.float16)
    compiled = ref.half()
    assert compare_tensor(compiled, eager, ref) is None


def test_shape_dtype_and_type_mismatches():
    x = torch.zeros(2, 3)
    assert compare_tensor(torch.zeros(3, 2), x, None)[0] == "shape"
    assert compare_tensor(x.double(), x, None)[0] == "dtype"
    assert compare_tensor(None, x, None)[0] == "type"


def test_every_output_is_compared():
    a, b = torch.ones(3), torch.ones(2)
    bad = b.clone()
    bad[0] = 7
    assert compare_outputs((a, bad), (a, b), (a.double(), b.double())) == [(1, "values", pytest.approx(
        compare_tensor(bad, b, b.double())[1]))]
    assert compare_outputs((a,), (a, b), None)[0][1] == "arity"
    assert compare_outputs((None, bad), (None, b), None)[0][0] == 1
