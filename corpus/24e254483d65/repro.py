"""shapefuzz 24e254483d65: compiled-only-error | RuntimeError | setStorage: sizes [...], strides [...], storage offset N, and itemsize N requiring a storage size of N are out of bounds for storage of size N | torch._functorch._aot_autograd.functional_utils:gen_alias_from_base | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = x0.as_strided((x0.shape[0],), (x0.stride(0),), x0.storage_offset())
    return (v0,)


compiled = torch.compile(program, backend='inductor', dynamic=True)
torch.manual_seed(0)
x0 = torch.randn(4)[3:].view((1,))
compiled(x0)
