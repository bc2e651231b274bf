"""Indexing with index tensors made in the program (common_gen.index): each
entry is (i*k + c) % size along the indexed dim, so indices are in range at
every call and their arithmetic is symbolic in that dim's size. k == 1 is a
rotation (no repeats): the only form given to ops whose result is undefined
for repeated indices (scatter, index_copy_, index_put without accumulate).

index_select, gather, take_along_dim, scatter, scatter_add, scatter_reduce,
index_add, index_put (accumulate both ways), index_copy_, and advanced
indexing x[idx] on dim 0 or 1.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import drawn, _ANY, _NUMERIC, OPS, _fresh
from fuzz.program.ops.common_gen import dim_text, index
from fuzz.program.symbolic import Dim, norm_dim

_REDUCE = ("sum", "prod", "amax", "amin", "mean")


def _indexable_dims(a) -> list:
    return [d for d in range(-a.rank, 0) if a.shape[d].min > 0]


def _params(a, rotation=False, extra=None):
    """dim (negative), k (stride through the dim), c (offset), len (index
    length: the dim's own size, or a literal within it)."""
    dims = _indexable_dims(a)

    def draw(draw_):
        d = draw_(st.sampled_from(dims))
        p = {"dim": d, "k": 1 if rotation else draw_(st.sampled_from([1, 2, 3, 0])),
             "c": draw_(st.integers(0, 3)), "len": draw_(st.sampled_from(["dim", 1, 2]))}
        if isinstance(p["len"], int) and p["len"] > a.shape[d].min:
            p["len"] = "dim"
        if extra is not None:
            p.update(draw_(extra))
        return p
    return drawn(draw)


def _check(a, p, rotation=False):
    d = p.get("dim")
    if not isinstance(d, int) or not -a.rank <= d < 0:
        return f"index dim {d!r} must be negative and in range for rank {a.rank}"
    if a.shape[d].min <= 0:
        return "an indexed dim must be non-empty at every call"
    if rotation and p.get("k") != 1:
        return "this op needs a rotation index (k == 1): repeated indices make it undefined"
    n = p.get("len")
    if n != "dim" and not (isinstance(n, int) and 0 <= n <= a.shape[d].min):
        return "index length must be 'dim' or a literal no larger than the dim"
    return None


def _idx(x, a, p) -> str:
    d = p["dim"]
    n = dim_text(x, d) if p["len"] == "dim" else str(p["len"])
    return index(n, dim_text(x, d), x, p["k"], p["c"])


def _len_dim(a, p) -> Dim:
    return a.shape[p["dim"]] if p["len"] == "dim" else Dim.literal(p["len"], a.calls)


def _full_index(x, a, p) -> str:
    """The 1-d index shaped to broadcast along dim `dim` and expanded to x's
    shape there (gather/scatter need index.ndim == x.ndim)."""
    d = norm_dim(p["dim"], a.rank)
    view = ", ".join("-1" if i == d else "1" for i in range(a.rank))
    sizes = ", ".join("-1" if i == d else dim_text(x, i) for i in range(a.rank))
    return f"{_idx(x, a, p)}.view({view}).expand({sizes})"


def _with_len(a, p):
    return tuple(_len_dim(a, p) if i == norm_dim(p["dim"], a.rank) else s for i, s in enumerate(a.shape))


def _whole_index(p: dict) -> dict:
    """Params with an index as long as the dim: the scatters' src is x itself (or its flip), and eager's
    backward refuses a src longer than the index ("ScatterBackward0 returned an invalid gradient")."""
    return {**p, "len": "dim"}


def _op(name, dtypes, params, check, shape, render, api, doc, dims=_indexable_dims, grad_params=None):
    return OPS.add(OpSpec(
        name=name, family="index", arity=1,
        accepts=lambda a: a.dtype in dtypes and a.rank >= 1 and bool(dims(a)),
        params=lambda args: params(args[0]),
        check=lambda args, p: (None if args[0].dtype in dtypes else f"{name} does not take {args[0].dtype}")
        or check(args[0], p),
        infer=lambda args, p, out: _fresh(args[0], out, shape=shape(args[0], p)),
        render=lambda n, p, i: render(n[0], i[0], p),
        # the index's modulus is the dim's size: Dynamo guards it non-zero
        guards=lambda args, p: set(args[0].shape[p["dim"]].syms),
        api=api, doc=doc, grad_params=grad_params))


_op("index_select", _ANY, _params, _check, _with_len,
    lambda x, a, p: f"torch.index_select({x}, {p['dim']}, {_idx(x, a, p)})",
    "torch.index_select", "index_select with a made index")
_op("gather", _ANY, lambda a: _params(a, extra=None), _check, _with_len,
    lambda x, a, p: f"torch.gather({x}, {p['dim']}, {_full_index(x, a, p)})", "torch.gather",
    "gather along a dim with a made index of x's shape")
_op("take_along_dim", _ANY, _params, _check, _with_len,
    lambda x, a, p: f"torch.take_along_dim({x}, {_full_index(x, a, p)}, dim={p['dim']})", "torch.take_along_dim",
    "take_along_dim with a made index of x's shape")
_op("scatter", _ANY, lambda a: _params(a, rotation=True), lambda a, p: _check(a, p, rotation=True),
    lambda a, p: a.shape,
    lambda x, a, p: f"torch.scatter({x}, {p['dim']}, {_full_index(x, a, p)}, {x}.flip({p['dim']}))",
    "torch.scatter", "scatter x's own values reversed, through a rotation index", grad_params=_whole_index)
_op("scatter_add", _NUMERIC, _params, _check, lambda a, p: a.shape,
    lambda x, a, p: f"torch.scatter_add({x}, {p['dim']}, {_full_index(x, a, p)}, {x})",
    "torch.scatter_add", "scatter_add with repeated indices", grad_params=_whole_index)


def _reduce_extra(a):
    reduces = _REDUCE if a.dtype in ("float32", "float64", "float16", "bfloat16") else _REDUCE[:-1]
    return st.fixed_dictionaries({"reduce": st.sampled_from(reduces), "include_self": st.booleans()})


def _reduce_check(a, p):
    if p.get("reduce") not in _REDUCE:
        return f"scatter_reduce takes one of {_REDUCE}"
    if p["reduce"] == "mean" and a.dtype not in ("float32", "float64", "float16", "bfloat16"):
        return "scatter_reduce mean of an integer tensor rounds differently by design"
    return _check(a, p)


_op("scatter_reduce", _NUMERIC, lambda a: _params(a, extra=_reduce_extra(a)), _reduce_check, lambda a, p: a.shape,
    lambda x, a, p: (f"torch.scatter_reduce({x}, {p['dim']}, {_full_index(x, a, p)}, {x}.flip({p['dim']}), "
                     f"{p['reduce']!r}, include_self={p['include_self']})"),
    "torch.scatter_reduce", "scatter_reduce (sum, prod, amax, amin, mean), include_self both ways",
    grad_params=_whole_index)
_op("index_add", _NUMERIC, _params, _check, lambda a, p: a.shape,
    lambda x, a, p: (f"{x}.index_add({p['dim']}, {_idx(x, a, p)}, "
                     f"{x}.narrow({p['dim']}, 0, {dim_text(x, p['dim']) if p['len'] == 'dim' else p['len']}))"),
    "torch.index_add", "index_add of a slice of x itself")


def _put_render(x, a, p):
    value = "1" if a.dtype != "bool" else "True"
    return (f"{x}.index_put(({_idx(x, a, p)},), torch.tensor({value}, dtype={x}.dtype, device={x}.device), "
            f"accumulate={p['accumulate']})")


def _first_dim(a) -> list:
    return [d for d in _indexable_dims(a) if norm_dim(d, a.rank) == 0]


def _put_check(a, p):
    if p.get("accumulate") not in (True, False):
        return "index_put: accumulate must be a bool"
    if p["accumulate"] and a.dtype == "bool":
        return "index_put accumulate of bool"
    return _check(a, p, rotation=not p["accumulate"])


def _put_params(a):
    acc = st.booleans() if a.dtype != "bool" else st.just(False)

    def draw(draw_):
        accumulate = draw_(acc)
        p = draw_(_params(a, rotation=not accumulate))
        # index_put takes index tensors only: the made index addresses dim 0
        return {**p, "dim": -a.rank, "len": "dim", "accumulate": accumulate}
    return drawn(draw)


_op("index_put", _ANY, _put_params, lambda a, p: _put_check(a, p) or (
    None if norm_dim(p["dim"], a.rank) == 0 else "index_put is drawn on dim 0"), lambda a, p: a.shape, _put_render,
    "torch.index_put", "index_put of a scalar on dim 0 with a made index, accumulate both ways", dims=_first_dim)


def _adv_render(x, a, p):
    d = norm_dim(p["dim"], a.rank)
    return f"{x}[{', '.join([':'] * d + [_idx(x, a, p)])}]"


def _front_dims(a) -> list:
    return [d for d in _indexable_dims(a) if norm_dim(d, a.rank) <= 1]


def _adv_params(a):
    dims = _front_dims(a)
    return _params(a).map(lambda p: p if p["dim"] in dims else {**p, "dim": dims[0], "len": "dim"})


_op("advanced_index", _ANY, _adv_params, lambda a, p: _check(a, p) or (
    None if norm_dim(p["dim"], a.rank) <= 1 else "advanced indexing is drawn on dim 0 or 1"),
    _with_len, _adv_render, "Tensor.__getitem__", "x[idx] and x[:, idx] with a made integer index",
    dims=_front_dims)
