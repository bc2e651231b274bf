"""shapefuzz 85ae96d39581: compiled-only-error | RuntimeError | unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation. | torch._functorch._aot_autograd.runtime_wrappers:__torch_dispatch__ | device: cuda

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
    x0 = make((1,), torch.float32, 1.0, g)
    return [x0]


def program(x0):
    v0 = torch.nonzero(x0)
    v1 = v0.index_add(-1, ((torch.arange(1, device=v0.device) * 0) % v0.shape[-1]), v0.narrow(-1, 0, 1))
    return (v1,)


compiled = torch.compile(program, backend='inductor', fullgraph=True)
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
