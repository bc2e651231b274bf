"""shapefuzz d37b6e05c614: compiled-only-error | ZeroDivisionError | division by zero | torch.utils._sympy.functions:eval | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
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
    x0 = make((2, s0, 2), torch.float32, 1.0, g)
    torch._dynamo.maybe_mark_dynamic(x0, 1)
    torch._dynamo.maybe_mark_dynamic(x0, 2)
    return [x0]


def program(x0):
    v0 = F.pad(x0, (0, 0, x0.shape[-2] // 3 - 1, x0.shape[-2] // 3 - 1,))
    return (v0,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
