"""shapefuzz 7e75124be4ea: compiled-only-error | AcceleratorError | CUDA error: operation not permitted when stream is capturing | - | device: cuda

Seen: compiled-only-error at call 1. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.nonzero(x0)
    return (v0,)


compiled = torch.compile(program, backend='inductor', fullgraph=True, options={'triton.cudagraphs': True})
for call, s0 in enumerate([0, 0]):
    torch.manual_seed(call)
    x0 = torch.randn(s0).to('cuda')
    compiled(x0)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
