import itertools

import pytest
import torch

from fuzz.program import dtypes as D


def T(name):
    return getattr(torch, name)


@pytest.mark.parametrize("a,b", list(itertools.product(D.ALL, D.ALL)))
def test_promote_matches_torch(a, b):
    x, y = torch.zeros(2, dtype=T(a)), torch.zeros(2, dtype=T(b))
    assert D.promote(a, b) == str(torch.result_type(x, y)).removeprefix("torch.")


@pytest.mark.parametrize("a", D.ALL)
@pytest.mark.parametrize("s", [True, 2, 2.5])
def test_promote_scalar_matches_torch(a, s):
    assert D.promote_scalar(a, s) == str(torch.result_type(torch.zeros(2, dtype=T(a)), s)).removeprefix("torch.")


@pytest.mark.parametrize("a", D.ALL)
def test_floating_and_sum_results(a):
    x = torch.zeros(2, dtype=T(a))
    assert D.floating_result(a) == str(torch.sin(x).dtype).removeprefix("torch.")
    assert D.sum_result(a) == str(torch.sum(x).dtype).removeprefix("torch.")


@pytest.mark.parametrize("src,dst", [(s, d) for s in D.ALL for d in D.ALL if d != "bool"])
def test_can_cast_matches_inplace_mul(src, dst):
    try:
        torch.ones(2, dtype=T(dst)).mul_(torch.ones(2, dtype=T(src)))
        allowed = True
    except RuntimeError:
        allowed = False
    assert D.can_cast(D.promote(dst, src), dst) == allowed
