"""shapefuzz 67edeaa119f4: compiled-only-error | ValueError | The argument '((-N)) - N' is not comparable. | torch._inductor.utils:sympy_subs | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
"""
import torch
import torch.nn.functional as F

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 1
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((s0, 2), torch.float32, 1.0, g)
    return [x0]


def program(x0):
    v0 = F.pad(x0, (1, 0,), mode='replicate')
    v1 = torch.cat([x0, v0], dim=1)
    return (v1,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
