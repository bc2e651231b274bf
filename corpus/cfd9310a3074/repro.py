"""shapefuzz cfd9310a3074: stride-mismatch | output | strides: padded | families: matrix | device: cuda

Expected: compiled and eager agree. Seen: stride-mismatch at call 0, output 0. Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s1 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((s1, s1), torch.float32, 1.0, g)
    return [x0]


def program(x0):
    v0 = torch.matmul(x0, torch.arange((x0.shape[-1]) * (2), device=x0.device).reshape((x0.shape[-1], 2)).to(x0.dtype).mul(0.37).add(0).sin())
    return (v0,)


compiled = torch.compile(program, backend='inductor', options={'force_shape_pad': True})
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in (actual[0], expected[0])]
assert strides[0] == strides[1], f"compiled vs eager, stride-mismatch at output 0: compiled {strides[0]}, eager {strides[1]}"
