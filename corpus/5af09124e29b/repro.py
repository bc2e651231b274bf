"""shapefuzz 5af09124e29b: compiled-only-error | RuntimeError | u? >= N | torch._inductor.utils:run | data: masked_select | device: cuda

Seen: compiled-only-error at call 4. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x0):
    v0 = torch.masked_select(x0, (x0 > 0))
    v1 = F.log_softmax(v0, dim=0)
    return (v1,)


torch._dynamo.config.capture_dynamic_output_shape_ops = True
compiled = torch.compile(program, backend='inductor')
for call in range(5):
    torch.manual_seed(call)
    x0 = torch.randn(()).to('cuda')
    compiled(x0)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
