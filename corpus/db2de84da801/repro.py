"""shapefuzz db2de84da801: compiled-only-error | ZeroDivisionError | float division by zero | torch._decomp.decompositions:native_group_norm_backward | device: cuda

Expected: compiled and eager agree. Seen: compiled-only-error at call 3. Exits 1 while the bug stands.
"""
import torch
import torch.nn.functional as F

DEVICE = 'cuda'


def make(shape, dtype, scale, g):
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)


def make_inputs(call):
    """The inputs of one call: seeded random values, with the dims marked dynamic as in the case."""
    s0 = [5, 6, 16, 31][call]
    s1 = [16, 4, 7, 0][call]
    s2 = [4, 2, 16, 8][call]
    g = torch.Generator().manual_seed(320000 + call)
    x0 = make((s0, 1, 1, s2, 1), torch.float32, 1.0, g).expand((s0, 1, s1, s2, 1))
    x0 = x0.detach().requires_grad_()
    x1 = make((8 + 4 * s2 * 4,), torch.float32, 1.0, g)[8:].view((4, s2, 4))
    x1 = x1.detach().requires_grad_()
    torch._dynamo.mark_dynamic(x0, -5)
    torch._dynamo.maybe_mark_dynamic(x0, -4)
    torch._dynamo.mark_dynamic(x0, -3, min=0, max=80)
    torch._dynamo.maybe_mark_dynamic(x0, -2)
    torch._dynamo.maybe_mark_dynamic(x0, -1)
    torch._dynamo.maybe_mark_dynamic(x1, -3)
    torch._dynamo.maybe_mark_dynamic(x1, -2)
    return [x0, x1]


def program(x0, x1):
    v0 = F.group_norm(x0, 1)
    return (v0,)


def grads(outputs, inputs):
    """Gradients of sum(out**2)/2 (as the judge takes them) for each input that requires grad."""
    loss = sum(((o if o.dtype == torch.float64 else o.float()) ** 2).sum() / 2
               for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad)
    return torch.autograd.grad(loss, [t for t in inputs if t.requires_grad], allow_unused=True)


torch._dynamo.config.capture_scalar_outputs = True
compiled = torch.compile(program, backend='inductor', options={**torch._inductor.list_mode_options('max-autotune-no-cudagraphs', None), **{'triton.autotune_pointwise': True, 'max_autotune_pointwise': True}})
for call in range(3):  # the earlier calls of the schedule
    compiled(*make_inputs(call))
eager_inputs = make_inputs(3)
expected = program(*eager_inputs)
inputs = make_inputs(3)
actual = compiled(*inputs)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
