"""shapefuzz b8d786f8006e: dtype-mismatch | output | needs: reduction | marks: - | layout: - | dtype: narrow-int | values: - | mode: - | flags: - | device: cuda

Seen: dtype-mismatch at call 0, output 0 (v0). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.any(x0, dim=0)
    return (v0,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randint(-8, 9, (1,)).to(torch.uint8)
expected = program(x0)
actual = compiled(x0)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, dtype-mismatch at output 0: {m}")
