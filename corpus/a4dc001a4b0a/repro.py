"""shapefuzz a4dc001a4b0a: compiled-only-error | AssertionError | incorrect out shape after application of ViewMeta sequence: (...) (actual) vs (...) (expected) | torch._functorch._aot_autograd.functional_utils:gen_alias_from_base | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0, x1):
    v0 = x1.view(torch.int8)
    v1 = v0.clamp_(min=None, max=0)
    v2 = torch.nan_to_num(x0)
    return (v1, v2)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randint(-8, 9, (1, 2, 1)).to(torch.uint8)
x1 = x0.transpose(-1, -2)
compiled(x0, x1)
