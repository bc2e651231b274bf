"""shapefuzz 1ea7d2adc643: divergence | output | needs: inplace > view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: - | device: cuda

Expected: compiled and eager agree. Seen: divergence at call 0, output 0 (v1). Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s1 = 1
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((3 + 2,), torch.float32, 1.0, g)[3:].view((2,))
    torch._dynamo.maybe_mark_dynamic(x0, 0)
    return [x0]


def program(x0):
    v0 = x0.mul_(0.0)
    v1 = v0.reshape(v0.shape[0])
    return (v1,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
