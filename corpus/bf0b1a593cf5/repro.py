"""shapefuzz bf0b1a593cf5: compiled-only-error | AssertionError | - | torch._inductor.tiling_utils:get_pw_red_splits | needs: pad(mode=constant) > reduction | marks: dynamic | layout: - | dtype: bool | values: - | mode: - | flags: - | device: cuda

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
    s0 = 2
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((s0, s0, s0), torch.bool, 1.0, g)
    torch._dynamo.maybe_mark_dynamic(x0, 0)
    torch._dynamo.maybe_mark_dynamic(x0, 1)
    torch._dynamo.maybe_mark_dynamic(x0, 2)
    return [x0]


def program(x0):
    v0 = F.pad(x0, (1, 0,))
    v1 = torch.amin(v0, dim=0)
    return (v1,)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
