"""shapefuzz bf0b1a593cf5: compiled-only-error | AssertionError | - | torch._inductor.tiling_utils:get_pw_red_splits | needs: pad(mode=constant) > reduction | marks: dynamic | layout: - | dtype: bool | values: - | mode: - | flags: - | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x0):
    v0 = F.pad(x0, (1, 0,))
    v1 = torch.amin(v0, dim=0)
    return (v1,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randint(0, 2, (2, 2, 2)).bool().to('cuda')
torch._dynamo.maybe_mark_dynamic(x0, 0)
torch._dynamo.maybe_mark_dynamic(x0, 1)
torch._dynamo.maybe_mark_dynamic(x0, 2)
compiled(x0)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
