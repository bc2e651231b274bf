"""shapefuzz 71170491d57c: divergence | output | needs: nn > cat > index(accumulate=True,len=dim) | marks: dynamic | layout: - | dtype: - | values: - | mode: - | flags: - | device: cuda

Expected: compiled and eager agree. Seen: divergence at call 0, output 0 (v1). Exits 1 while the bug stands.
"""
import torch
import torch.nn.functional as F

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((s0, s0, s0, 1, 1), torch.float32, 1.0, g)
    torch._dynamo.maybe_mark_dynamic(x0, 1)
    return [x0]


def program(x0):
    v0 = F.softmax(x0, dim=1)
    v1 = torch.cat([v0, x0], dim=0)
    v2 = v0.index_put((((torch.arange(v0.shape[-5], device=v0.device) * 0) % v0.shape[-5]),), torch.tensor(1, dtype=v0.dtype, device=v0.device), accumulate=True)
    return (v1, v2)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
