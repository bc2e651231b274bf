"""shapefuzz d5b043fd4263: stride-mismatch | output | strides: dim order | families: pointwise | device: cuda

Seen: stride-mismatch at call 0, output 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.nan_to_num(x0)
    return (v0,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(2, 2).permute(1, 0)
torch._dynamo.decorators.mark_unbacked(x0, 0)
expected = program(x0)
actual = compiled(x0)
strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in (actual[0], expected[0])]
assert strides[0] == strides[1], f"compiled vs eager, stride-mismatch at output 0: compiled {strides[0]}, eager {strides[1]}"
