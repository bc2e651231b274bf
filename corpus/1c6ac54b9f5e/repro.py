"""shapefuzz 1c6ac54b9f5e: divergence | output | needs: binary | marks: - | layout: - | dtype: - | values: - | mode: - | flags: - | device: cuda

Expected: compiled and eager agree. Seen: divergence at call 0, output 0 (v0). Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 1
    g = torch.Generator().manual_seed(1000 + call)
    x0 = make((3,), torch.float32, 1.0, g)
    return [x0]


def program(x0):
    v0 = torch.floor_divide(x0, x0)
    return (v0,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
