"""shapefuzz b8d53025ea62: divergence | output | needs: pad(mode=constant) | marks: - | layout: - | dtype: bool | values: - | mode: - | flags: - | device: cuda

Seen: divergence at call 0, output 0 (v0). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x0):
    v0 = F.pad(x0, (1, 0,))
    return (v0,)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randint(0, 2, (1,)).bool().to('cuda')
expected = program(x0)
actual = compiled(x0)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
