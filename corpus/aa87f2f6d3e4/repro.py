"""shapefuzz aa87f2f6d3e4: compiled-only-error | ValueError | atomic_add does not support <dtype> | triton.language.semantic:atom_red_typechecking_impl | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 0. Exits 1 while the bug stands.
"""
import torch

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    if dtype.is_floating_point:
        t = (torch.randn(shape, generator=g) * scale).to(dtype)
    elif dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
    else:
        t = torch.randint(-8, 9, shape, generator=g).to(dtype)
    return t.to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 17
    s1 = 17
    s2 = 0
    g = torch.Generator().manual_seed(808000 + call)
    x0 = make((1 + sum(max(n - 1, 0) for n in (s0, 2, s1, 3)),), torch.int16, 1.0, g).as_strided((s0, 2, s1, 3), (1, 1, 1, 1))
    x1 = make((3 + s0 * s2 * 2,), torch.int16, 1.0, g)[3:].view((s0, s2, 2))
    torch._dynamo.decorators.mark_unbacked(x0, 2)
    return [x0, x1]


def program(x0, x1):
    v0 = torch.cumprod(x0, dim=-3)
    v1 = torch.topk(v0, 2, dim=-4, largest=False).values
    v2 = x0.index_add(-3, ((torch.arange(x0.shape[-3], device=x0.device) * 3) % x0.shape[-3]), x0.narrow(-3, 0, x0.shape[-3]))
    v3 = x1[..., -2:-1:3]
    v4 = v2.add_(1)
    return (v1, v3, v4)


def grads(outputs, inputs):
    """Gradients of sum(out**2)/2 (as the judge takes them) for each input that requires grad."""
    loss = sum(((o if o.dtype == torch.float64 else o.float()) ** 2).sum() / 2
               for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad)
    return torch.autograd.grad(loss, [t for t in inputs if t.requires_grad], allow_unused=True)


torch._dynamo.config.capture_scalar_outputs = True
compiled = torch.compile(program, backend='inductor', dynamic=False, fullgraph=True, options={**torch._inductor.list_mode_options('max-autotune-no-cudagraphs', False), **{'triton.autotune_pointwise': True}})
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
