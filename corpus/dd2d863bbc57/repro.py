"""shapefuzz dd2d863bbc57: compiled-only-error | TypeError | mul expected N arguments, got N | torch.fx.interpreter:call_function | device: cuda

Seen: compiled-only-error at call 1. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0, x1):
    v0 = torch.nan_to_num(x1)
    v1 = x0.mul_(0.0)
    return (v0, v1)


compiled = torch.compile(program, backend='inductor')
for call, s0 in enumerate([1, 2]):
    torch.manual_seed(call)
    x0 = torch.randn(3, s0, 2, s0, 4)
    x1 = x0[...]
    compiled(x0, x1)
