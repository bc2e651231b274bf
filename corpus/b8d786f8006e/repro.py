"""shapefuzz b8d786f8006e: dtype-mismatch | output | needs: reduction | marks: - | layout: - | dtype: narrow-int | values: - | mode: - | flags: - | device: cuda

Expected: compiled and eager agree. Seen: dtype-mismatch at call 0, output 0 (v0). Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    if dtype.is_floating_point:
        t = (torch.randn(shape, generator=g) * scale).to(dtype)
    elif dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
    else:
        t = torch.randint(-8, 9, shape, generator=g).to(dtype)
    return t.to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 1
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((1,), torch.uint8, 1.0, g)
    return [x0]


def program(x0):
    v0 = torch.any(x0, dim=0)
    return (v0,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, dtype-mismatch at output 0: {m}")
