"""shapefuzz eb8d07fb062e: divergence | output | needs: pointwise > view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: triton.cudagraphs=True | device: cuda

Expected: compiled and eager agree. Seen: divergence at call 1, output 1 (v1). Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 1
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((3 + 2,), torch.float32, 1.0, g)[3:].view((2,))
    torch._dynamo.maybe_mark_dynamic(x0, 0)
    return [x0]


def program(x0):
    v0 = torch.nan_to_num(x0)
    v1 = x0.reshape(x0.shape[0])
    return (v0, v1)


compiled = torch.compile(program, backend='inductor', options={'triton.cudagraphs': True})
for call in range(1):  # the earlier calls of the schedule
    compiled(*make_inputs(call))
eager_inputs = make_inputs(1)
expected = program(*eager_inputs)
inputs = make_inputs(1)
actual = compiled(*inputs)
torch.testing.assert_close(actual[1], expected[1], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 1: {m}")
