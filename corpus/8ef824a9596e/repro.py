"""shapefuzz 8ef824a9596e: compiled-only-error | AssertionError | - | torch._inductor.cudagraph_trees:_allocate_and_copy_recording_inputs | data: item_arange | device: cuda

Seen: compiled-only-error at call 1. Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch


def program(x0, x1, x2):
    v0 = torch.arange(int(x2.flatten()[:1].abs().tolist()[0]) % 7 + 1, device=x2.device)
    return (v0,)


torch._dynamo.config.capture_scalar_outputs = True
compiled = torch.compile(program, backend='inductor', options={'triton.cudagraphs': True})
for call, s0 in enumerate([1, 0]):
    torch.manual_seed(2110000 + call)
    x0 = torch.randn(s0, 2).to('cuda')
    x1 = torch.randn(()).to('cuda')
    x2 = torch.randint(-8, 9, (1,)).to(torch.int16).to('cuda')
    compiled(x0, x1, x2)
torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here
