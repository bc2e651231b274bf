"""shapefuzz 8ef824a9596e: compiled-only-error | AssertionError | - | torch._inductor.cudagraph_trees:_allocate_and_copy_recording_inputs | data: item_arange | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 1. Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    if dtype.is_floating_point:
        t = (torch.randn(shape, generator=g) * scale).to(dtype)
    elif dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
    else:
        t = torch.randint(-8, 9, shape, generator=g).to(dtype)
    return t.to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = [1, 0][call]
    g = torch.Generator().manual_seed(2110000 + call)
    x0 = make((s0, 2), torch.float32, 1.0, g)
    x1 = make((), torch.float32, 1.0, g)
    x2 = make((1,), torch.int16, 1.0, g)
    return [x0, x1, x2]


def program(x0, x1, x2):
    v0 = torch.arange(int(x2.flatten()[:1].abs().tolist()[0]) % 7 + 1, device=x2.device)
    return (v0,)


torch._dynamo.config.capture_scalar_outputs = True
compiled = torch.compile(program, backend='inductor', options={'triton.cudagraphs': True})
for call in range(1):  # the earlier calls of the schedule
    compiled(*make_inputs(call))
eager_inputs = make_inputs(1)
expected = program(*eager_inputs)
inputs = make_inputs(1)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
