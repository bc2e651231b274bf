"""shapefuzz 67edeaa119f4: compiled-only-error | ValueError | The argument '((-N)) - N' is not comparable. | torch._inductor.utils:sympy_subs | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x0):
    v0 = F.pad(x0, (1, 0,), mode='replicate')
    v1 = torch.cat([x0, v0], dim=1)
    return (v1,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(1, 2).to('cuda')
compiled(x0)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
