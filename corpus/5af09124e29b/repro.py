"""shapefuzz 5af09124e29b: compiled-only-error | RuntimeError | u? >= N | torch._inductor.utils:run | data: masked_select | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 4. Exits 1 while the bug stands.
"""
import torch
import torch.nn.functional as F

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 1
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((), torch.float32, 1.0, g)
    return [x0]


def program(x0):
    v0 = torch.masked_select(x0, (x0 > 0))
    v1 = F.log_softmax(v0, dim=0)
    return (v1,)


torch._dynamo.config.capture_dynamic_output_shape_ops = True
compiled = torch.compile(program, backend='inductor')
for call in range(4):  # the earlier calls of the schedule
    compiled(*make_inputs(call))
eager_inputs = make_inputs(4)
expected = program(*eager_inputs)
inputs = make_inputs(4)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
