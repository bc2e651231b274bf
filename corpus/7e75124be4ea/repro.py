"""shapefuzz 7e75124be4ea: compiled-only-error | AcceleratorError | CUDA error: operation not permitted when stream is capturing | - | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 1. Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 0
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((s0,), torch.float32, 1.0, g)
    return [x0]


def program(x0):
    v0 = torch.nonzero(x0)
    return (v0,)


compiled = torch.compile(program, backend='inductor', fullgraph=True, options={'triton.cudagraphs': True})
for call in range(1):  # the earlier calls of the schedule
    compiled(*make_inputs(call))
eager_inputs = make_inputs(1)
expected = program(*eager_inputs)
inputs = make_inputs(1)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
