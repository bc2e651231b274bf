"""shapefuzz f7c4910c1a3c: compiled-only-error | AssertionError | expected size N==N, stride N==N at dim=N; expected size N==N, stride N==N at dim=N; expected size N==N, stride N==N at dim=N; expected size N==N, stride N==N at dim=N | torch._inductor.utils:run | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = torch.sort(x0, dim=0, descending=False, stable=True).indices
    return (v0,)


compiled = torch.compile(program, backend='inductor', dynamic=True)
torch.manual_seed(0)
x0 = torch.randn(5).as_strided((2, 2, 2, 2), (1, 1, 1, 1))
torch._dynamo.decorators.mark_unbacked(x0, 1)
compiled(x0)
