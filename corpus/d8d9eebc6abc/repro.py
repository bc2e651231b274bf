"""shapefuzz d8d9eebc6abc: compiled-only-error | CppCompileError | error: ‘struct at::vec::CPU_CAPABILITY::Vectorized<<dtype>>’ has no member named ‘cast’ | torch._inductor.cpp_builder:_run_compile_cmd | device: cpu

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.arange(x0.shape[0], device=x0.device)
    v1 = torch.logical_and(v0, v0)
    return (v1,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(4)
compiled(x0)
