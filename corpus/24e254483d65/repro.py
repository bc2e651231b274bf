"""shapefuzz 24e254483d65: compiled-only-error | RuntimeError | setStorage: sizes [...], strides [...], storage offset N, and itemsize N requiring a storage size of N are out of bounds for storage of size N | torch._functorch._aot_autograd.functional_utils:gen_alias_from_base | device: cuda

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
    x0 = make((3 + 1,), torch.float32, 1.0, g)[3:].view((1,))
    return [x0]


def program(x0):
    v0 = x0.as_strided((x0.shape[0],), (x0.stride(0),), x0.storage_offset())
    return (v0,)


compiled = torch.compile(program, backend='inductor', dynamic=True)
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
