"""shapefuzz 1e1166c3c533: divergence | output | needs: inplace > pointwise | marks: - | layout: - | dtype: - | values: - | mode: - | flags: - | device: cpu

Seen: divergence at call 1, output 0 (v6). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x2, x3):
    v3 = x3.mul_(0)
    v6 = torch.nan_to_num(x2)
    return (v6,)


compiled = torch.compile(program, backend='aot_eager')
for call in range(2):
    torch.manual_seed(call)
    x2 = torch.randn(())
    x3 = x2[...] if [True, False, True, False][call] else x2[...].clone()
    eager_inputs = [x2, x3]
    expected = program(*eager_inputs)
    torch.manual_seed(call)
    x2 = torch.randn(())
    x3 = x2[...] if [True, False, True, False][call] else x2[...].clone()
    actual = compiled(x2, x3)
    torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                               msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
