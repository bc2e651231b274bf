"""shapefuzz d02ab6d18425: divergence | output | needs: resample > view | marks: dynamic | layout: - | dtype: - | values: - | mode: max-autotune-no-cudagraphs | flags: comprehensive_padding=False, split_reductions=False, triton.cudagraphs=True, triton.persistent_reductions=False | device: cuda

Seen: divergence at call 0, output 0 (v2). Exits 1 while the bug stands, 0 once it is fixed.
"""
import torch
import torch.nn.functional as F


def program(x1):
    v1 = F.pixel_shuffle(x1, 2)
    v2 = v1.expand(-1, -1, 3, -1, -1)
    return (v2,)


torch._dynamo.config.assume_static_by_default = False
compiled = torch.compile(program, backend='inductor', dynamic=True, fullgraph=True, options={**torch._inductor.list_mode_options('max-autotune-no-cudagraphs', True), **{'triton.cudagraphs': True, 'comprehensive_padding': False, 'split_reductions': False, 'triton.persistent_reductions': False}})
torch.manual_seed(65536000)
x1 = torch.randn(1, 1, 4, 1, 1)
expected = program(x1)
actual = compiled(x1)
torch.testing.assert_close(actual[0], expected[0], rtol=0.0001, atol=0.0001, equal_nan=True,
                           msg=lambda m: f"compiled vs eager, divergence at output 0: {m}")
