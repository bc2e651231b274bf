"""shapefuzz d0b0dfcd4619: compiled-only-error | GuardOnDataDependentSymNode | Could not extract specialized integer from data-dependent expression u? (unhinted: u?). (Size-like symbols: u?) | torch.fx.experimental.symbolic_shapes:_evaluate_expr | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0):
    v0 = x0[(x0 > 0)]
    v1 = torch.masked_select(v0, (v0 > 0))
    return (v1,)


torch._dynamo.config.capture_dynamic_output_shape_ops = True
compiled = torch.compile(program, backend='inductor')
torch.manual_seed(0)
x0 = torch.randn(1)
x0 = x0.detach().requires_grad_()
compiled(x0)
