"""shapefuzz d649e53c6196: divergence | output | needs: inplace > pointwise > pointwise | marks: dynamic | layout: permuted | dtype: - | values: - | mode: - | flags: - | device: cpu

Expected: compiled and eager agree. Seen: divergence at call 0, output 0 (v1). Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cpu'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((1, 2, s0, s0, s0), torch.float32, 1.0, g).permute(3, 2, 1, 0, 4)
    x1 = x0.transpose(-1, -2)
    torch._dynamo.maybe_mark_dynamic(x1, 0)
    torch._dynamo.maybe_mark_dynamic(x1, 3)
    return [x0, x1]


def program(x0, x1):
    x1[..., 0:0] = 0.0
    v0 = x1
    v1 = torch.nan_to_num(v0)
    v2 = torch.nan_to_num(x0)
    return (v1, v2)


compiled = torch.compile(program, backend='aot_eager')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
