"""shapefuzz e1c9065d74d0: nonfinite | output | needs: inplace > view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: - | device: cuda

Seen: nonfinite at call 0, output 1 (v1). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = x0.mul_(float('inf'))
    v1 = x0.flatten(0, 1)
    return (v0, v1)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(7)[3:].view((2, 2))
eager_inputs = [x0]
expected = program(*eager_inputs)
torch.manual_seed(0)
x0 = torch.randn(7)[3:].view((2, 2))
torch._dynamo.maybe_mark_dynamic(x0, 1)
actual = compiled(x0)
torch.testing.assert_close(actual[1], expected[1], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, nonfinite at output 1: {m}")
