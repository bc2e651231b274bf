"""shapefuzz f049042e4b4a: compiled-only-error | RuntimeError | These storage data ptrs are not allocated in pool (...) but should be: {N}. This could be a bug in inductor aliasing tracking or in a custom op's meta function. Please file an issue. | torch:_check_with | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.unique(x0, sorted=True, return_counts=True)[1]
    return (v0,)


torch._dynamo.config.capture_dynamic_output_shape_ops = True
compiled = torch.compile(program, backend='inductor', mode='max-autotune')
torch.manual_seed(0)
x0 = torch.randn(()).to('cuda')
compiled(x0)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
