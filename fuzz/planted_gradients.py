"""Planted backends wrong in the backward graph only (re-exported by fuzz/planted.py:
`--backend fuzz.planted:wrong_gradients`): AOTAutograd's forward graph runs as is, its backward graph
eagerly with one gradient changed."""

from __future__ import annotations

import torch


def _wrong_backward(gm, example_inputs, change):
    """AOTAutograd's forward graph as is, its backward graph run eagerly with `change` applied to its first
    non-empty floating gradient."""
    from torch._dynamo.backends.common import aot_autograd

    def forward(fw, _):
        return fw.forward

    def backward(bw, _):
        def run(*args):
            out = list(bw(*args))
            for i, g in enumerate(out):
                if isinstance(g, torch.Tensor) and g.is_floating_point() and g.numel() > 0:
                    out[i] = change(g)
                    break
            return out
        return run

    return aot_autograd(fw_compiler=forward, bw_compiler=backward)(gm, example_inputs)


def wrong_gradients(gm, example_inputs):
    """Right forward, wrong backward: AOTAutograd's backward graph runs
    eagerly and its first non-empty gradient comes back scaled by 1.5."""
    return _wrong_backward(gm, example_inputs, lambda g: g * 1.5)
