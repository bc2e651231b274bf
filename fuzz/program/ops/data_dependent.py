"""Ops whose output size depends on the data: nonzero, masked_select, boolean
mask indexing, unique (values or counts), bincount, and item()/tolist()
feeding a size (narrow, arange). Dynamo needs capture_dynamic_output_shape_ops
/ capture_scalar_outputs to keep them in the graph (sampled by the settings),
else it breaks the graph there.

The generator cannot know such a size. Its Dim gets a fresh key (it matches
nothing but itself) and values 0 at every call: a lower bound. Every
constraint the op database checks is of the form "at most the size" (pad
crops, narrow lengths, windows, kernels) or "non-empty", so a lower bound
keeps later ops valid whatever the data turn out to be.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import OPS, _dim_in, _fresh
from fuzz.program.symbolic import Dim, norm_dim


def unknown(out: str, calls: int, tag: str = "") -> Dim:
    """A data-dependent size: its own key, values a lower bound of 0."""
    return Dim(f"u_{out}{tag}", 0, (0,) * calls)


def _nonzero_mask(x: str, dt: str) -> str:
    return x if dt == "bool" else f"({x} > 0)"


def _op(name, accepts, params, check, infer, render, api, doc, grad=True):
    return OPS.add(OpSpec(name=name, family="data", arity=1, accepts=accepts, params=lambda args: params(args[0]),
                          check=lambda args, p: check(args[0], p), infer=lambda args, p, out: infer(args[0], p, out),
                          render=lambda n, p, i: render(n[0], p, i[0]), api=api, doc=doc, grad=grad))


def _none(a, p):
    return None


_op("nonzero", lambda a: 1 <= a.rank <= 4, lambda a: st.just({}), _none,
    lambda a, p, out: _fresh(a, out, shape=(unknown(out, a.calls), Dim.literal(a.rank, a.calls)), dtype="int64"),
    lambda x, p, a: f"torch.nonzero({x})", "torch.nonzero", "indices of the non-zero elements")
_op("masked_select", lambda a: a.rank >= 1, lambda a: st.just({}), _none,
    lambda a, p, out: _fresh(a, out, shape=(unknown(out, a.calls),)),
    lambda x, p, a: f"torch.masked_select({x}, {_nonzero_mask(x, a.dtype)})", "torch.masked_select",
    "the positive elements, by masked_select")
_op("mask_index", lambda a: a.rank >= 1, lambda a: st.just({}), _none,
    lambda a, p, out: _fresh(a, out, shape=(unknown(out, a.calls),)),
    lambda x, p, a: f"{x}[{_nonzero_mask(x, a.dtype)}]", "Tensor.__getitem__(bool mask)",
    "the positive elements, by boolean-mask indexing")
_op("unique", lambda a: a.rank >= 1,
    lambda a: st.sampled_from(["values", "counts"]).map(lambda t: {"take": t}),
    lambda a, p: None if p.get("take") in ("values", "counts") else "unique: take values or counts",
    lambda a, p, out: _fresh(a, out, shape=(unknown(out, a.calls),), dtype=a.dtype if p["take"] == "values" else "int64"),
    lambda x, p, a: f"torch.unique({x}, sorted=True, return_counts=True)[{0 if p['take'] == 'values' else 1}]",
    "torch.unique", "sorted unique values, or their counts", grad=False)
_op("bincount", lambda a: a.dtype in D.INTEGRAL or a.dtype == "bool", lambda a: st.sampled_from([8, 3]).map(
    lambda m: {"mod": m}),
    lambda a, p: None if (a.dtype in D.INTEGRAL or a.dtype == "bool") and p.get("mod", 0) >= 1 else "bincount of ints",
    lambda a, p, out: _fresh(a, out, shape=(unknown(out, a.calls),), dtype="int64"),
    lambda x, p, a: f"torch.bincount({x}.flatten().long().abs() % {p['mod']})", "torch.bincount",
    "bincount of an integer value (taken modulo a literal: non-negative)")


# ---- a scalar read from the data, used as a size --------------------------------------------

def _scalar_text(x: str, via: str) -> str:
    if via == "item":
        return f"int({x}.abs().amax().item())"
    return f"int({x}.flatten()[:1].abs().tolist()[0])"


def _item_ok(a) -> bool:
    return a.dtype in D.INTEGRAL and a.rank >= 1 and all(d.min >= 1 for d in a.shape)


_op("item_narrow", _item_ok,
    lambda a: st.fixed_dictionaries({"dim": st.integers(-a.rank, -1), "via": st.sampled_from(["item", "tolist"])}),
    lambda a, p: None if _item_ok(a) and _dim_in(a, p.get("dim")) and p.get("via") in ("item", "tolist")
    else "item_narrow takes a non-empty integer tensor",
    lambda a, p, out: _fresh(a, out, shape=tuple(unknown(out, a.calls) if i == norm_dim(p["dim"], a.rank) else d
                                                 for i, d in enumerate(a.shape))),
    lambda x, p, a: f"{x}.narrow({p['dim']}, 0, {_scalar_text(x, p['via'])} % ({x}.shape[{p['dim']}] + 1))",
    "Tensor.item", "narrow by a length read from the data with item() or tolist()")
_op("item_arange", _item_ok, lambda a: st.sampled_from(["item", "tolist"]).map(lambda v: {"via": v}),
    lambda a, p: None if _item_ok(a) and p.get("via") in ("item", "tolist") else "item_arange takes a non-empty int",
    lambda a, p, out: _fresh(a, out, shape=(unknown(out, a.calls),), dtype="int64"),
    lambda x, p, a: f"torch.arange({_scalar_text(x, p['via'])} % 7 + 1, device={x}.device)", "torch.arange",
    "arange of a length read from the data")


