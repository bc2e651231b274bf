"""shapefuzz e1c9065d74d0: nonfinite | output | needs: inplace > view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: - | device: cuda

Expected: compiled and eager agree. Seen: nonfinite at call 0, output 1 (v1). Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((3 + s0 * s0,), torch.float32, 1.0, g)[3:].view((s0, s0))
    torch._dynamo.maybe_mark_dynamic(x0, 1)
    return [x0]


def program(x0):
    v0 = x0.mul_(float('inf'))
    v1 = x0.flatten(0, 1)
    return (v0, v1)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[1], expected[1], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, nonfinite at output 1: {m}")
