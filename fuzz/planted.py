"""Deliberately wrong torch.compile backends, to test that the oracle and the
campaign catch real classes of compiler bugs. Use them as `--backend
fuzz.planted:NAME`. Each wraps the FX graph and runs it eagerly, then breaks
one thing under a stated condition; `passthrough` breaks nothing.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

THRESHOLD = 8  # "a dynamic dim exceeds some size"
STORAGE_MESSAGE = ("setStorage: sizes [2304], strides [1], storage offset 0, and itemsize 4 requiring a "
                   "storage size of 9216 are out of bounds for storage of size 8704")


def _tensors(args):
    return [a for a in args if isinstance(a, torch.Tensor)]


def _corrupt_first(out):
    """Add 1 to element 0 of the first non-empty output tensor."""
    out = list(out)
    for i, t in enumerate(out):
        if isinstance(t, torch.Tensor) and t.numel() > 0:
            t = t.clone()  # keeps the strides, so index rather than view(-1)
            first = (0,) * t.dim()
            t[first] = ~t[first] if t.dtype == torch.bool else t[first] + 1
            out[i] = t
            break
    return tuple(out)


def _has_pad(gm) -> bool:
    pads = {F.pad, torch._C._nn.pad, torch.ops.aten.constant_pad_nd.default, torch.ops.aten.pad.default}
    return any(n.op == "call_function" and n.target in pads for n in gm.graph.nodes)


def passthrough(gm, example_inputs):
    """Correct: runs the graph as is."""
    return gm.forward


def corrupt_large(gm, example_inputs):
    """Wrong output element when any input dim exceeds THRESHOLD."""
    def run(*args):
        out = gm(*args)
        if any(n > THRESHOLD for t in _tensors(args) for n in t.shape):
            return _corrupt_first(out)
        return out
    return run


def storage_error_on_pad(gm, example_inputs):
    """Raises the seed's setStorage error at run time for graphs that pad."""
    if not _has_pad(gm):
        return gm.forward

    def run(*args):
        raise RuntimeError(STORAGE_MESSAGE)
    return run


def mutate_input(gm, example_inputs):
    """Writes into its first floating input tensor, which it must not do."""
    def run(*args):
        out = gm(*args)
        for t in _tensors(args):
            if t.is_floating_point() and t.numel() > 0:
                with torch.no_grad():
                    t[(0,) * t.dim()] += 1
                break
        return out
    return run


def wrong_on_odd_reflect(gm, example_inputs):
    """Wrong output when the graph has a reflect pad and an input dim is odd
    and > 1 (a known minimal form for shrinking tests)."""
    reflect = any(n.op == "call_function" and n.target in (F.pad, torch._C._nn.pad)
                  and (n.kwargs.get("mode") == "reflect" or "reflect" in n.args[2:3]) for n in gm.graph.nodes)
    if not reflect:
        return gm.forward

    def run(*args):
        out = gm(*args)
        if any(n > 1 and n % 2 for t in _tensors(args) for n in t.shape):
            return _corrupt_first(out)
        return out
    return run


PLANTED = ("corrupt_large", "storage_error_on_pad", "mutate_input", "wrong_on_odd_reflect")
