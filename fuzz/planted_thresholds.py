"""Planted backends at thresholds (re-exported by fuzz/planted.py: `--backend fuzz.planted:NAME`).

`float64_inside` is correct and more precise than eager, as a compiler that keeps a fused kernel's
intermediates in a wider type is: where eager's rounding puts a computed float on the other side of a
threshold (a comparison, a rounding, a data-dependent size), its outputs differ from eager's, and the
judge must call that rounding. The two wrong ones are float64_inside with a real bug at a threshold: a
value moved across it by far more than an ulp, and an element that masked_select drops. Neither is in
fuzz.planted.PLANTED (a random campaign seldom draws a threshold on a value only rounding moves);
tests/test_rounding.py uses them on programs built for them.

Limits: the graph runs twice (float64 on copies of the inputs, then as is, so that writes to inputs
happen once and as eager's); graphs with inputs that require grad or share memory, or that float64
inputs make raise (a constant of a fixed dtype), run as they are; a view(dtype) of a floating value sees
float64 bits.
"""

from __future__ import annotations

import torch


def _memory(t) -> int:
    return t.untyped_storage().data_ptr() if t.numel() else 0


def _overlaps(t) -> bool:
    """Whether t addresses some element twice (an expanded layout): its layout cannot be copied into."""
    extent = 0
    for stride, n in sorted((s, n) for s, n in zip(t.stride(), t.shape) if n > 1):
        if stride <= extent:
            return True
        extent += stride * (n - 1)
    return False


def _rounded_once(ref, wide, inputs):
    """A float64 run's output `wide` in the dtype and layout of the plain run's `ref`; ref itself where it is
    an input's memory (a view or an input written in place: exact either way) or self-overlapping."""
    if not isinstance(ref, torch.Tensor) or not isinstance(wide, torch.Tensor):
        return ref
    if (_memory(ref) and _memory(ref) in {_memory(x) for x in inputs}) or _overlaps(ref):
        return ref
    if ref.shape != wide.shape:  # a data-dependent size the float64 values decide otherwise
        return wide.to(ref.dtype)
    out = torch.empty_strided(ref.shape, ref.stride(), dtype=ref.dtype, device=ref.device)
    return out.copy_(wide)


def _copy(t):
    """t's whole storage copied (floats as float64) and viewed as t views it: an as_strided of t reads the
    same elements in the copy, and a write to the copy leaves t as it is."""
    flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.detach().untyped_storage())
    flat = flat.to(torch.float64 if t.is_floating_point() else t.dtype, copy=True)
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


def _in_float64(run):
    """A backend's callable from `run(*args)` (the graph): computed in float64, rounded once per output."""
    def call(*args):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        memory = [_memory(t) for t in tensors if t.numel()]
        if any(t.requires_grad for t in tensors) or len(set(memory)) < len(memory):
            return run(*args)  # copies would not carry the gradient, nor a write through one alias to another
        state = torch.get_rng_state()
        try:
            wide = run(*[_copy(a) if isinstance(a, torch.Tensor) else a for a in args])
        except Exception:  # a graph that takes no float64 (a constant of its own dtype): as it is
            torch.set_rng_state(state)
            return run(*args)
        torch.set_rng_state(state)  # random ops draw what eager draws
        out = run(*args)
        if isinstance(out, (tuple, list)):
            return type(out)(_rounded_once(r, w, tensors) for r, w in zip(out, wide))
        return _rounded_once(out, wide, tensors)
    return call


def float64_inside(gm, example_inputs):
    """Correct, and no further from float64 than eager anywhere: computes the graph in float64 (floating
    inputs cast up) and rounds each output once to its dtype. Comparisons inside the graph see the precise
    values, so where eager's rounding crossed a threshold its outputs differ from eager's by design."""
    return _in_float64(gm.forward)


def _each_result(gm, names: set, change):
    """gm with every result of a call to one of `names` (a function's __name__ or a method's name) passed
    through `change` before any use."""
    for n in list(gm.graph.nodes):
        name = str(n.target) if n.op == "call_method" else getattr(n.target, "__name__", "")
        if n.op in ("call_function", "call_method") and name in names:
            with gm.graph.inserting_after(n):
                changed = gm.graph.call_function(change, (n,))
            n.replace_all_uses_with(changed, delete_user_cb=lambda user: user is not changed)
    gm.recompile()
    return gm


def _first_up_by_one(t):
    t = t.clone()
    if t.numel():
        t[(0,) * t.dim()] += 1
    return t


def moves_subtraction(gm, example_inputs):
    """Wrong: float64_inside, but element 0 of every subtraction's result is 1 larger: a computed float moved
    across a threshold by far more than rounding moves it."""
    return _in_float64(_each_result(gm, {"sub"}, _first_up_by_one).forward)


def _last_dropped(t):
    return t[:-1]


def drops_selected(gm, example_inputs):
    """Wrong: float64_inside, but every masked_select inside the graph (with
    capture_dynamic_output_shape_ops) loses its last element."""
    return _in_float64(_each_result(gm, {"masked_select"}, _last_dropped).forward)
