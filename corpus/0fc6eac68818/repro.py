"""shapefuzz 0fc6eac68818: stride-mismatch | output | data: nonzero | device: cuda

Seen: stride-mismatch at call 0, output 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.nonzero(x0)
    v1 = v0.clamp_(min=0, max=0)
    return (v1,)


torch._dynamo.config.capture_dynamic_output_shape_ops = True
compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(2, 1)
eager_inputs = [x0.clone()]
expected = program(*eager_inputs)
actual = compiled(x0)
strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in (actual[0], expected[0])]
assert strides[0] == strides[1], f"compiled vs eager, stride-mismatch at output 0: compiled {strides[0]}, eager {strides[1]}"
