"""shapefuzz 97e0245651af: stride-mismatch | output | strides: dim order | families: inplace,pointwise | device: cuda

Seen: stride-mismatch at call 0, output 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.nan_to_num(x0)
    v1 = v0.index_copy_(0, (torch.arange(v0.shape[0], device=v0.device) % v0.shape[0]), v0.flip(0).clone())
    return (v1,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(1, 2, 1, 2).contiguous(memory_format=torch.channels_last)
eager_inputs = [x0.clone()]
expected = program(*eager_inputs)
actual = compiled(x0)
strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in (actual[0], expected[0])]
assert strides[0] == strides[1], f"compiled vs eager, stride-mismatch at output 0: compiled {strides[0]}, eager {strides[1]}"
