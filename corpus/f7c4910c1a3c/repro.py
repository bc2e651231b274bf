"""shapefuzz f7c4910c1a3c: compiled-only-error | AssertionError | expected size N==N, stride N==N at dim=N; expected size N==N, stride N==N at dim=N; expected size N==N, stride N==N at dim=N; expected size N==N, stride N==N at dim=N | torch._inductor.utils:run | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((1 + sum(max(n - 1, 0) for n in (2, s0, 2, s0)),), torch.float32, 1.0, g).as_strided((2, s0, 2, s0), (1, 1, 1, 1))
    torch._dynamo.decorators.mark_unbacked(x0, 1)
    return [x0]


def program(x0):
    v0 = torch.sort(x0, dim=0, descending=False, stable=True).indices
    return (v0,)


compiled = torch.compile(program, backend='inductor', dynamic=True)
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
