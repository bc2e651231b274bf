"""shapefuzz d37b6e05c614: compiled-only-error | ZeroDivisionError | division by zero | torch.utils._sympy.functions:eval | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x0):
    v0 = F.pad(x0, (0, 0, x0.shape[-2] // 3 - 1, x0.shape[-2] // 3 - 1,))
    return (v0,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(2, 2, 2).to('cuda')
torch._dynamo.maybe_mark_dynamic(x0, 1)
torch._dynamo.maybe_mark_dynamic(x0, 2)
compiled(x0)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
