"""shapefuzz 5471811cfb47: compiled-only-error | AcceleratorError | CUDA error: an illegal memory access was encountered | -

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
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
    s0 = 6
    s1 = 0
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((s0, 2, 4), torch.float64, 0.01, g)
    x1 = make((1,), torch.bool, 0.01, g).expand((s1,))
    torch._dynamo.decorators.mark_unbacked(x0, 0)
    torch._dynamo.maybe_mark_dynamic(x0, 1)
    torch._dynamo.decorators.mark_unbacked(x1, 0)
    return [x0, x1]


def program(x0, x1):
    v0 = F.pad(x1, (4, 3,), value=1)
    v1 = F.pad(x1, (4, 3,), value=1)
    return (v0, v1)


compiled = torch.compile(program, backend='inductor', options={'triton.autotune_pointwise': True, 'max_autotune_pointwise': True, 'split_reductions': False, 'triton.persistent_reductions': False})
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
