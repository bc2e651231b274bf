"""shapefuzz 0839c5693190: compiled-only-error | AcceleratorError | CUDA error: misaligned address | -

Expected: compiled and eager agree. Seen: compiled-only-error at call 0, backward. Exits 1 while the bug stands.
"""
import torch
import torch.nn.functional as F

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = 5
    s1 = 6
    g = torch.Generator().manual_seed(2706000 + call)
    x0 = make((3 + 4 * s0 * 4 * s1 * 3,), torch.float32, 0.01, g)[3:].view((4, s0, 4, s1, 3))
    x0 = x0.detach().requires_grad_()
    torch._dynamo.maybe_mark_dynamic(x0, -5)
    torch._dynamo.decorators.mark_unbacked(x0, -4)
    torch._dynamo.maybe_mark_dynamic(x0, -3)
    torch._dynamo.mark_dynamic(x0, -2, min=0, max=79)
    torch._dynamo.maybe_mark_dynamic(x0, -1)
    return [x0]


def program(x0):
    v0 = F.batch_norm(x0, torch.zeros(x0.shape[1], device=x0.device, dtype=x0.dtype), torch.ones(x0.shape[1], device=x0.device, dtype=x0.dtype), torch.arange((x0.shape[1]), device=x0.device).reshape((x0.shape[1],)).to(x0.dtype).mul(0.37).add(0).sin(), torch.arange((x0.shape[1]), device=x0.device).reshape((x0.shape[1],)).to(x0.dtype).mul(0.48).add(1).sin(), training=False)
    v1 = F.layer_norm(v0, v0.shape[-2:], torch.arange((v0.shape[-2]) * (v0.shape[-1]), device=v0.device).reshape((v0.shape[-2], v0.shape[-1])).to(v0.dtype).mul(0.37).add(0).sin(), torch.arange((v0.shape[-2]) * (v0.shape[-1]), device=v0.device).reshape((v0.shape[-2], v0.shape[-1])).to(v0.dtype).mul(0.48).add(1).sin())
    return (v1,)


def grads(outputs, inputs):
    """Gradients of sum(out**2)/2 (as the judge takes them) for each input that requires grad."""
    loss = sum(((o if o.dtype == torch.float64 else o.float()) ** 2).sum() / 2
               for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad)
    return torch.autograd.grad(loss, [t for t in inputs if t.requires_grad], allow_unused=True)


torch._dynamo.config.specialize_int = True
compiled = torch.compile(program, backend='inductor', options={**torch._inductor.list_mode_options('max-autotune', None), **{'triton.autotune_pointwise': True, 'triton.cudagraphs': True, 'max_autotune_pointwise': True, 'split_reductions': False, 'triton.persistent_reductions': False}})
eager_inputs = make_inputs(0)
expected = program(*eager_inputs)
inputs = make_inputs(0)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
grads(actual, inputs)  # the compiled backward raises
