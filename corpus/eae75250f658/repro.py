"""shapefuzz eae75250f658: divergence | output | needs: nn > inplace | marks: - | layout: - | dtype: - | values: - | mode: - | flags: - | device: cuda

Seen: divergence at call 0, output 0 (v0). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x0):
    v0 = F.dropout(x0, p=0.0, training=False)
    v1 = x0.zero_()
    return (v0, v1)


compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(())
eager_inputs = [x0.clone()]
expected = program(*eager_inputs)
actual = compiled(x0)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
