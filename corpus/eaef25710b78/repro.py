"""shapefuzz eaef25710b78: divergence | output | needs: view | marks: dynamic | layout: offset | dtype: - | values: - | mode: - | flags: - | device: cuda

Seen: divergence at call 0, output 0 (v0). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = x0.as_strided((x0.shape[0] // 2, x0.shape[2], x0.shape[3], x0.shape[1], x0.shape[4],), (x0.stride(0), x0.stride(2), x0.stride(3), x0.stride(1), x0.stride(4),), x0.storage_offset())
    return (v0,)


compiled = torch.compile(program, backend='inductor', dynamic=True)
torch.manual_seed(0)
x0 = torch.randn(11)[3:].view((2, 1, 1, 2, 2))
expected = program(x0)
actual = compiled(x0)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
