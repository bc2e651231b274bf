"""shapefuzz 1c6ac54b9f5e: divergence | output | needs: binary | marks: - | layout: - | dtype: - | values: - | mode: - | flags: - | device: cuda

Seen: divergence at call 0, output 0 (v0). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.floor_divide(x0, x0)
    return (v0,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(1000)
x0 = torch.randn(3).to('cuda')
expected = program(x0)
actual = compiled(x0)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
