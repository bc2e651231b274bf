"""shapefuzz 1ea7d2adc643: divergence | output | needs: inplace > view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: - | device: cuda

Seen: divergence at call 0, output 0 (v1). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = x0.mul_(0.0)
    v1 = v0.reshape(v0.shape[0])
    return (v1,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(5)[3:].view((2,))
eager_inputs = [x0]
expected = program(*eager_inputs)
torch.manual_seed(0)
x0 = torch.randn(5)[3:].view((2,))
torch._dynamo.maybe_mark_dynamic(x0, 0)
actual = compiled(x0)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
