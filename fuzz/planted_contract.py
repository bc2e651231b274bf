"""Planted backends that break a contract of the compiled function other than its values (fuzz/planted.py
re-exports them): the aliasing of its outputs, the errors eager raises, and two that tell the rerun rule
apart (wrong two ways on two runs: a nondeterministic bug; wrong once, right once: flaky). Each runs the
FX graph eagerly."""

from __future__ import annotations

import re

import torch
import torch.fx


def _tensors(args):
    return [a for a in args if isinstance(a, torch.Tensor)]


def _storage(t) -> int:
    return t.untyped_storage().data_ptr() if t.numel() else 0


def _same_tensor(out, x) -> bool:
    """Whether x could stand for `out`: the same shape, strides, dtype and values (not merely close)."""
    return (x.numel() > 0 and x.shape == out.shape and x.stride() == out.stride() and x.dtype == out.dtype
            and x.device == out.device and not x.requires_grad and torch.equal(x, out))


def returns_input_as_output(gm, example_inputs):
    """An aliasing bug, as Inductor's removal of `x + 0` was: an output that the graph computes afresh but
    that equals an input exactly (shape, strides, dtype, values) comes back as that very input tensor, so an
    in-place update of the result writes the caller's input."""
    def run(*args):
        out, inputs = gm(*args), _tensors(args)
        if not isinstance(out, (tuple, list)):
            return out
        taken = {_storage(x) for x in inputs}
        swapped = []
        for t in out:
            if isinstance(t, torch.Tensor) and t.numel() and not t.requires_grad and _storage(t) not in taken:
                t = next((x for x in inputs if _same_tensor(t, x)), t)
            swapped.append(t)
        return type(out)(swapped)
    return run


# What eager says when a program breaks an op's contract (fuzz/program/ops/contract.py draws such programs).
CONTRACT_ERRORS = re.compile(r"not implemented for|is not supported|without overflow|sizes should be greater than 0")


class _Accepting(torch.fx.Interpreter):
    """Runs the graph node by node; a node that raises a contract error gives a tensor of zeros like its
    first tensor argument instead."""

    def run_node(self, n):
        try:
            return super().run_node(n)
        except (RuntimeError, NotImplementedError) as e:
            if not CONTRACT_ERRORS.search(str(e)):
                raise
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            first = next((a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)), None)
            if first is None:
                raise
            return torch.zeros_like(first)


def accepts_what_eager_rejects(gm, example_inputs):
    """An error-parity bug: where eager raises an op's contract error (a dtype the op does not take, an
    empty input to a resampler, a fill out of the dtype's range, arithmetic on bools), the compiled function
    returns zeros instead."""
    def run(*args):
        return _Accepting(gm).run(*args)
    return run


_runs = {"two_ways": 0, "once": 0}


def _first_float(out, change):
    """out with `change` applied to element 0 of its first non-empty floating tensor."""
    out, done = list(out), False
    for i, t in enumerate(out):
        if not done and isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
            t = t.detach().clone()
            t[(0,) * t.dim()] = change(t[(0,) * t.dim()])
            out[i], done = t, True
    return tuple(out)


def wrong_two_ways(gm, example_inputs):
    """Nondeterministic: each graph compiled in this process is wrong, by turns with a NaN and with a value
    1e6 off in a floating output (garbage that changes from run to run): two runs fail two ways."""
    _runs["two_ways"] += 1
    nan = _runs["two_ways"] % 2 == 1

    def run(*args):
        return _first_float(gm(*args), (lambda v: v * float("nan")) if nan else (lambda v: v + 1e6))
    return run


def wrong_every_other(gm, example_inputs):
    """Flaky: every other graph compiled in this process (the first, the third, ...) is wrong, the others
    right: a run and its rerun fail once and pass once."""
    _runs["once"] += 1
    if _runs["once"] % 2 == 0:
        return gm.forward

    def run(*args):
        return _first_float(gm(*args), lambda v: v + 1e6)
    return run
