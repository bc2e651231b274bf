"""Planted backends wrong only where Dynamo's graph holds one op form (re-exported by fuzz/planted.py:
`--backend fuzz.planted:NAME`): each shows that the generator reaches its form and that the judge sees a
wrong output there. Like fuzz/planted.py's `_when_graph_has`, each runs the graph eagerly and adds 1 to the
first element of its first non-empty output tensor (or input, _when), only for graphs that hold the form."""

from __future__ import annotations

import torch


def _name(n) -> str:
    if n.op == "call_method":
        return str(n.target)
    if n.op == "call_function":
        return getattr(n.target, "__name__", str(n.target)).split(".")[0]
    return ""


def _corrupt_first(out):
    out = list(out)
    for i, t in enumerate(out):
        if isinstance(t, torch.Tensor) and t.numel() > 0:
            t = t.clone()
            first = (0,) * t.dim()
            t[first] = ~t[first] if t.dtype == torch.bool else t[first] + 1
            out[i] = t
            break
    return tuple(out)


def _when(holds):
    """A backend wrong on graphs where holds(gm). A graph that only writes its inputs (an in-place op on an
    input, returned: Dynamo returns the input itself) returns no tensor, so its first non-empty input is
    written wrong instead."""
    def backend(gm, example_inputs):
        if not holds(gm):
            return gm.forward

        def run(*args):
            out = gm(*args)
            if any(isinstance(t, torch.Tensor) and t.numel() for t in out):
                return _corrupt_first(out)
            for t in args:
                if isinstance(t, torch.Tensor) and t.numel() and t.dtype != torch.bool:
                    with torch.no_grad():
                        t[(0,) * t.dim()] += 1
                    break
            return out
        return run
    return backend


def _nodes(gm, names):
    return [n for n in gm.graph.nodes if _name(n) in names]


def _arg(n, i, key):
    return n.args[i] if len(n.args) > i else n.kwargs.get(key)


def _foreach(gm) -> bool:
    return any(_name(n).startswith("_foreach_") for n in gm.graph.nodes)


_BUILDERS = {"tensor", "full", "scalar_tensor"}
_FED = {"cumsum", "cumprod", "sum", "prod", "amax", "mean"}


def _built_0d_fed(gm) -> bool:
    """A scan or reduction of a tensor the graph builds from a constant."""
    return any(_name(_arg(n, 0, "input")) in _BUILDERS for n in _nodes(gm, _FED)
               if isinstance(_arg(n, 0, "input"), torch.fx.Node))


_DTYPED = {"cumsum", "cumprod", "sum", "prod", "mean", "softmax", "log_softmax"}


def _reduction_dtype(gm) -> bool:
    return any(n.kwargs.get("dtype") is not None for n in _nodes(gm, _DTYPED))


_VIEWS = {"view", "reshape", "transpose", "permute", "unsqueeze", "squeeze", "narrow", "__getitem__", "select",
          "expand", "flatten", "t"}


def _gapped_unfold(n) -> bool:
    """n is, or is a view of, an unfold whose step is at least its size."""
    while isinstance(n, torch.fx.Node):
        if _name(n) == "unfold":
            size, step = _arg(n, 2, "size"), _arg(n, 3, "step")
            return isinstance(size, int) and isinstance(step, int) and step >= size
        if _name(n) not in _VIEWS:
            return False
        n = _arg(n, 0, "input")
    return False


def _written_gapped_unfold(gm) -> bool:
    """An in-place method, or setitem, on a gapped unfold view."""
    return any((_name(n).endswith("_") and not _name(n).startswith("_") or _name(n) == "setitem")
               and n.args and _gapped_unfold(n.args[0]) for n in gm.graph.nodes)


wrong_on_foreach = _when(_foreach)
wrong_on_foreach.__doc__ = "Wrong output element for graphs with a _foreach_ op, out of place or in place."
wrong_on_index_fill = _when(lambda gm: bool(_nodes(gm, {"index_fill", "index_fill_"})))
wrong_on_index_fill.__doc__ = "Wrong output element for graphs with index_fill or index_fill_."
wrong_on_lerp = _when(lambda gm: bool(_nodes(gm, {"lerp", "lerp_"})))
wrong_on_lerp.__doc__ = "Wrong output element for graphs with lerp."
wrong_on_scalar_tensor_scan = _when(_built_0d_fed)
wrong_on_scalar_tensor_scan.__doc__ = ("Wrong output element for graphs that feed a 0-d tensor they build "
                                       "(torch.tensor, torch.full, torch.scalar_tensor) to a scan or a reduction.")
wrong_on_reduction_dtype = _when(_reduction_dtype)
wrong_on_reduction_dtype.__doc__ = "Wrong output element for graphs with a scan, reduction or softmax given dtype=."
wrong_on_gapped_unfold_write = _when(_written_gapped_unfold)
wrong_on_gapped_unfold_write.__doc__ = ("Wrong output element for graphs that write in place into an unfold whose "
                                        "step is at least its size (windows with gaps, no element twice).")
