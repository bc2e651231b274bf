"""shapefuzz eaef25710b78: divergence | output | needs: view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: - | device: cuda

Expected: compiled and eager agree. Seen: divergence at call 0, output 0 (v0). Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((3 + s0 * 1 * 1 * 2 * s0,), torch.float32, 1.0, g)[3:].view((s0, 1, 1, 2, s0))
    return [x0]


def program(x0):
    v0 = x0.as_strided((x0.shape[0] // 2, x0.shape[2], x0.shape[3], x0.shape[1], x0.shape[4],), (x0.stride(0), x0.stride(2), x0.stride(3), x0.stride(1), x0.stride(4),), x0.storage_offset())
    return (v0,)


compiled = torch.compile(program, backend='inductor', dynamic=True)
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
