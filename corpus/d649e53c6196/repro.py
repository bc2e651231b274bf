"""shapefuzz d649e53c6196: divergence | output | needs: inplace > pointwise > pointwise | marks: dynamic | layout: permuted | dtype: - | values: - | mode: - | flags: - | device: cpu

Seen: divergence at call 0, output 0 (v1). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0, x1):
    x1[..., 0:0] = 0.0
    v0 = x1
    v1 = torch.nan_to_num(v0)
    v2 = torch.nan_to_num(x0)
    return (v1, v2)


compiled = torch.compile(program, backend='aot_eager')
torch.manual_seed(0)
x0 = torch.randn(1, 2, 2, 2, 2).permute(3, 2, 1, 0, 4)
x1 = x0.transpose(-1, -2)
eager_inputs = [x0, x1]
expected = program(*eager_inputs)
torch.manual_seed(0)
x0 = torch.randn(1, 2, 2, 2, 2).permute(3, 2, 1, 0, 4)
x1 = x0.transpose(-1, -2)
torch._dynamo.maybe_mark_dynamic(x1, 0)
torch._dynamo.maybe_mark_dynamic(x1, 3)
actual = compiled(x0, x1)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
