"""Scans and orderings along one dim: cumsum, cumprod, sort, topk. sort is
stable and topk returns values only, so ties cannot make a correct compiler
disagree with eager."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import drawn, dtype_check, dtype_kw, with_dtype, _ANY, _dim_in, _fresh, OPS
from fuzz.program.symbolic import Dim

_ORDERED = _ANY - {"bool"}


def _along(name, dtypes, result, params, check, shape, render, api, doc, accepts=None, decides=()):
    return OPS.add(OpSpec(
        name=name, family="scan", arity=1,
        accepts=accepts or (lambda a: a.dtype in dtypes and a.rank >= 1),
        params=lambda args: params(args[0]),
        check=lambda args, p: (None if args[0].dtype in dtypes and _dim_in(args[0], p.get("dim"))
                               else f"{name}: bad dtype or dim") or check(args[0], p),
        infer=lambda args, p, out: _fresh(args[0], out, shape=shape(args[0], p), dtype=result(args[0].dtype, p)),
        render=lambda n, p, i: render(n[0], p), api=api, doc=doc, decides=decides))


def _dim(a):
    return st.integers(-a.rank, -1).map(lambda d: {"dim": d})


def _ok(a, p):
    return None


_along("cumsum", _ANY, lambda dt, p: p.get("dtype") or D.sum_result(dt), lambda a: with_dtype(_dim(a), a),
       dtype_check, lambda a, p: a.shape,
       lambda x, p: f"torch.cumsum({x}, dim={p['dim']}{dtype_kw(p)})", "torch.cumsum", "cumsum along any dim, "
       "dtype= (a wider one) or not")
_along("cumprod", _ANY, lambda dt, p: p.get("dtype") or D.sum_result(dt), lambda a: with_dtype(_dim(a), a),
       dtype_check, lambda a, p: a.shape,
       lambda x, p: f"torch.cumprod({x}, dim={p['dim']}{dtype_kw(p)})", "torch.cumprod", "cumprod along any dim, "
       "dtype= (a wider one) or not")


def _sort_params(a):
    return st.fixed_dictionaries({"dim": st.integers(-a.rank, -1), "descending": st.booleans(),
                                  "take": st.sampled_from(["values", "indices"])})


_along("sort", _ORDERED, lambda dt, p: "int64" if p["take"] == "indices" else dt, _sort_params,
       lambda a, p: None if p.get("take") in ("values", "indices") else "sort: take values or indices",
       lambda a, p: a.shape,
       lambda x, p: (f"torch.sort({x}, dim={p['dim']}, descending={p['descending']}, stable=True)"
                     f".{p['take']}"),
       "torch.sort", "stable sort, values or indices", decides=(0,))  # its indices follow the order


def _topk_params(a):
    dims = [d for d in range(-a.rank, 0) if a.shape[d].min >= 1]

    def draw(draw_):
        d = draw_(st.sampled_from(dims))
        k = draw_(st.integers(1, min(a.shape[d].min, 3)))
        return {"dim": d, "k": k, "largest": draw_(st.booleans())}
    return drawn(draw)


_along("topk", _ORDERED, lambda dt, p: dt, _topk_params,
       lambda a, p: None if isinstance(p.get("k"), int) and 0 <= p["k"] <= a.shape[p["dim"]].min
       else "topk: k larger than the dim at some call",
       lambda a, p: tuple(Dim.literal(p["k"], a.calls) if i == p["dim"] % a.rank else d for i, d in enumerate(a.shape)),
       lambda x, p: f"torch.topk({x}, {p['k']}, dim={p['dim']}, largest={p['largest']}).values",
       "torch.topk", "topk values along a dim never shorter than k",
       accepts=lambda a: a.dtype in _ORDERED and a.rank >= 1 and any(d.min >= 1 for d in a.shape))
