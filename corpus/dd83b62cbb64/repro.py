"""shapefuzz dd83b62cbb64: stride-mismatch | output | strides: dim order | families: cat | device: cuda

Seen: stride-mismatch at call 0, output 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.cat([x0, x0], dim=0)
    return (v0,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(2, 2, 2, 1).contiguous(memory_format=torch.channels_last)
expected = program(x0)
actual = compiled(x0)
strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in (actual[0], expected[0])]
assert strides[0] == strides[1], f"compiled vs eager, stride-mismatch at output 0: compiled {strides[0]}, eager {strides[1]}"
