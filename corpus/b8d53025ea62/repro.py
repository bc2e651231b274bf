"""shapefuzz b8d53025ea62: divergence | output | needs: pad(mode=constant) | marks: - | layout: - | dtype: bool | values: - | mode: - | flags: - | device: cuda

Expected: compiled and eager agree. Seen: divergence at call 0, output 0 (v0). Exits 1 while the bug stands.
"""
import torch
import torch.nn.functional as F

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
    s1 = 1
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((s1,), torch.bool, 1.0, g)
    return [x0]


def program(x0):
    v0 = F.pad(x0, (1, 0,))
    return (v0,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
