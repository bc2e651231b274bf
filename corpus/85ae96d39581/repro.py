"""shapefuzz 85ae96d39581: compiled-only-error | RuntimeError | unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation. | torch._functorch._aot_autograd.runtime_wrappers:__torch_dispatch__ | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.nonzero(x0)
    v1 = v0.index_add(-1, ((torch.arange(1, device=v0.device) * 0) % v0.shape[-1]), v0.narrow(-1, 0, 1))
    return (v1,)


compiled = torch.compile(program, backend='inductor', fullgraph=True)
torch.manual_seed(0)
x0 = torch.randn(1)
compiled(x0)
