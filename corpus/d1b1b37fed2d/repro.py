"""shapefuzz d1b1b37fed2d: compiled-only-error | RuntimeError | s?**N (<class 'torch.SymInt'>, N)is not tracked with proxy for <torch.fx.experimental.proxy_tensor.PythonKeyTracer object at <addr>> | torch.fx.experimental.proxy_tensor:get_proxy_slot | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
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
    s0 = 1
    g = torch.Generator().manual_seed(0 + call)
    x0 = make((1, 2, 2, s0, 2), torch.int64, 1.0, g)
    x1 = x0.transpose(-1, -2)
    return [x0, x1]


def program(x0, x1):
    v0 = x1.zero_()
    v1 = torch.nan_to_num(x0)
    return (v0, v1)


torch._dynamo.config.assume_static_by_default = False
compiled = torch.compile(program, backend='inductor')
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
