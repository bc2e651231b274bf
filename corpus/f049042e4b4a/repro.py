"""shapefuzz f049042e4b4a: compiled-only-error | RuntimeError | These storage data ptrs are not allocated in pool (...) but should be: {N}. This could be a bug in inductor aliasing tracking or in a custom op's meta function. Please file an issue. | torch:_check_with | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
"""
import torch

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
    v0 = torch.unique(x0, sorted=True, return_counts=True)[1]
    return (v0,)


torch._dynamo.config.capture_dynamic_output_shape_ops = True
compiled = torch.compile(program, backend='inductor', mode='max-autotune')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
