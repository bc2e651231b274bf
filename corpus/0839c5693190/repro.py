"""shapefuzz 0839c5693190: compiled-only-error | AcceleratorError | CUDA error: misaligned address | -

Seen: compiled-only-error at call 0, backward. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


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
torch.manual_seed(2706000)
x0 = (torch.randn(1443) * 0.01).to('cuda')[3:].view((4, 5, 4, 6, 3))
x0 = x0.detach().requires_grad_()
torch._dynamo.maybe_mark_dynamic(x0, -5)
torch._dynamo.decorators.mark_unbacked(x0, -4)
torch._dynamo.maybe_mark_dynamic(x0, -3)
torch._dynamo.mark_dynamic(x0, -2, min=0, max=79)
torch._dynamo.maybe_mark_dynamic(x0, -1)
actual = compiled(x0)
inputs = [x0]
grads(actual, inputs)  # the compiled backward raises
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
