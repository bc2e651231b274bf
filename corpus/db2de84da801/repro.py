"""shapefuzz db2de84da801: compiled-only-error | ZeroDivisionError | float division by zero | torch._decomp.decompositions:native_group_norm_backward | device: cuda

Seen: compiled-only-error at call 3. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x0, x1):
    v0 = F.group_norm(x0, 1)
    return (v0,)


torch._dynamo.config.capture_scalar_outputs = True
compiled = torch.compile(program, backend='inductor', options={**torch._inductor.list_mode_options('max-autotune-no-cudagraphs', None), **{'triton.autotune_pointwise': True, 'max_autotune_pointwise': True}})
for call, (s0, s1, s2) in enumerate([(5, 16, 4), (6, 4, 2), (16, 7, 16), (31, 0, 8)]):
    torch.manual_seed(320000 + call)
    x0 = torch.randn(s0, 1, 1, s2, 1).expand((s0, 1, s1, s2, 1))
    x0 = x0.detach().requires_grad_()
    x1 = torch.randn(8 + 4 * s2 * 4)[8:].view((4, s2, 4))
    x1 = x1.detach().requires_grad_()
    torch._dynamo.mark_dynamic(x0, -5)
    torch._dynamo.maybe_mark_dynamic(x0, -4)
    torch._dynamo.mark_dynamic(x0, -3, min=0, max=80)
    torch._dynamo.maybe_mark_dynamic(x0, -2)
    torch._dynamo.maybe_mark_dynamic(x0, -1)
    torch._dynamo.maybe_mark_dynamic(x1, -3)
    torch._dynamo.maybe_mark_dynamic(x1, -2)
    compiled(x0, x1)
