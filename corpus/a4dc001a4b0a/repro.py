"""shapefuzz a4dc001a4b0a: compiled-only-error | AssertionError | incorrect out shape after application of ViewMeta sequence: (...) (actual) vs (...) (expected) | torch._functorch._aot_autograd.functional_utils:gen_alias_from_base | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
"""
import torch

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
    x0 = make((1, s0, 1), torch.uint8, 1.0, g)
    x1 = x0.transpose(-1, -2)
    return [x0, x1]


def program(x0, x1):
    v0 = x1.view(torch.int8)
    v1 = v0.clamp_(min=None, max=0)
    v2 = torch.nan_to_num(x0)
    return (v1, v2)


compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
