"""shapefuzz aa87f2f6d3e4: compiled-only-error | ValueError | atomic_add does not support <dtype> | triton.language.semantic:atom_red_typechecking_impl | device: cuda

Seen: compiled-only-error at call 0. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0, x1):
    v0 = torch.cumprod(x0, dim=-3)
    v1 = torch.topk(v0, 2, dim=-4, largest=False).values
    v2 = x0.index_add(-3, ((torch.arange(x0.shape[-3], device=x0.device) * 3) % x0.shape[-3]), x0.narrow(-3, 0, x0.shape[-3]))
    v3 = x1[..., -2:-1:3]
    v4 = v2.add_(1)
    return (v1, v3, v4)


torch._dynamo.config.capture_scalar_outputs = True
compiled = torch.compile(program, backend='inductor', dynamic=False, fullgraph=True, options={**torch._inductor.list_mode_options('max-autotune-no-cudagraphs', False), **{'triton.autotune_pointwise': True}})
torch.manual_seed(808000)
x0 = torch.randint(-8, 9, (36,)).to(torch.int16).to('cuda').as_strided((17, 2, 17, 3), (1, 1, 1, 1))
x1 = torch.randint(-8, 9, (3,)).to(torch.int16).to('cuda')[3:].view((17, 0, 2))
torch._dynamo.decorators.mark_unbacked(x0, 2)
compiled(x0, x1)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
