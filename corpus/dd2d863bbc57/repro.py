"""shapefuzz dd2d863bbc57: compiled-only-error | TypeError | mul expected N arguments, got N | torch.fx.interpreter:call_function | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 1. Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = [1, 2][call]
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((3, s0, 2, s0, 4), torch.float32, 1.0, g)
    x1 = x0[...]
    return [x0, x1]


def program(x0, x1):
    v0 = torch.nan_to_num(x1)
    v1 = x0.mul_(0.0)
    return (v0, v1)


compiled = torch.compile(program, backend='inductor')
for call in range(1):  # the earlier calls of the schedule
    compiled(*make_inputs(call))
eager_inputs = make_inputs(1)
expected = program(*eager_inputs)
inputs = make_inputs(1)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
