"""shapefuzz d1b1b37fed2d: compiled-only-error | RuntimeError | s?**N (<class 'torch.SymInt'>, N)is not tracked with proxy for <torch.fx.experimental.proxy_tensor.PythonKeyTracer object at <addr>> | torch.fx.experimental.proxy_tensor:get_proxy_slot | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0, x1):
    v0 = x1.zero_()
    v1 = torch.nan_to_num(x0)
    return (v0, v1)


torch._dynamo.config.assume_static_by_default = False
compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randint(-8, 9, (1, 2, 2, 1, 2))
x1 = x0.transpose(-1, -2)
compiled(x0, x1)
