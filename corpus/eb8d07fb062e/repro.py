"""shapefuzz eb8d07fb062e: divergence | output | needs: pointwise > view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: triton.cudagraphs=True | device: cuda

Seen: divergence at call 1, output 1 (v1). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.nan_to_num(x0)
    v1 = x0.reshape(x0.shape[0])
    return (v0, v1)


compiled = torch.compile(program, backend='inductor', options={'triton.cudagraphs': True})
for call in range(2):
    torch.manual_seed(call)
    x0 = torch.randn(3 + 2).to('cuda')[3:].view((2,))
    torch._dynamo.maybe_mark_dynamic(x0, 0)
    expected = program(x0)
    actual = compiled(x0)
    torch.testing.assert_close(actual[1], expected[1], rtol=0.0001, atol=0.0001, equal_nan=True,
                               msg=lambda m: f"compiled vs eager, divergence at output 1: {m}")
