"""shapefuzz cfd9310a3074: stride-mismatch | output | strides: padded | families: matrix | device: cuda

Seen: stride-mismatch at call 0, output 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.matmul(x0, torch.arange((x0.shape[-1]) * (2), device=x0.device).reshape((x0.shape[-1], 2)).to(x0.dtype).mul(0.37).add(0).sin())
    return (v0,)


compiled = torch.compile(program, backend='inductor', options={'force_shape_pad': True})
torch.manual_seed(0)
x0 = torch.randn(2, 2).to('cuda')
expected = program(x0)
actual = compiled(x0)
strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in (actual[0], expected[0])]
assert strides[0] == strides[1], f"compiled vs eager, stride-mismatch at output 0: compiled {strides[0]}, eager {strides[1]}"
