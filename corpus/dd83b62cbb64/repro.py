"""shapefuzz dd83b62cbb64: stride-mismatch | output | strides: dim order | families: cat | device: cuda

Expected: compiled and eager agree. Seen: stride-mismatch at call 0, output 0. Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((2, s0, 2, 1), torch.float32, 1.0, g).contiguous(memory_format=torch.channels_last)
    return [x0]


def program(x0):
    v0 = torch.cat([x0, x0], dim=0)
    return (v0,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in (actual[0], expected[0])]
assert strides[0] == strides[1], f"compiled vs eager, stride-mismatch at output 0: compiled {strides[0]}, eager {strides[1]}"
