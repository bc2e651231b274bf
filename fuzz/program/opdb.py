"""The op database: every op shapefuzz can generate, declared once.

Adding an op is one entry here (usually one call of a family factory); the
strategies, the validator, the interpreter and the repro generator all read
it. tests/test_opdb.py checks that every entry is reachable by the strategies,
runs in eager and renders to Python.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import (
    OpSpec,
    Registry,
    calls,
    check_width,
    index_expr,
    product_dim,
    py_literal,
    render_width,
    slice_len,
    slice_text,
    width_syms,
    width_values,
    widths,
)
from fuzz.program.symbolic import Dim, ValueInfo, broadcast_shape, broadcastable, broadcasts_to, norm_dim

OPS = Registry()
MAX_RANK = 6

_ANY = frozenset(D.ALL)
_NUMERIC = frozenset(D.ALL) - {"bool"}
_FLOAT = frozenset(D.FLOATING)
_INTLIKE = frozenset(D.INTEGRAL) | {"bool"}


def _fresh(info: ValueInfo, out: str, **kw) -> ValueInfo:
    """A newly allocated result: own storage, no overlap, not an input."""
    base = dict(shape=info.shape, dtype=info.dtype, root=out, calls=info.calls, overlapping=False, is_input=False)
    base.update(kw)
    return ValueInfo(**base)


def _view(info: ValueInfo, shape, **kw) -> ValueInfo:
    """A view: same storage root; overlap is inherited."""
    return ValueInfo(shape=tuple(shape), dtype=info.dtype, root=info.root, calls=info.calls,
                     overlapping=kw.get("overlapping", info.overlapping), is_input=False)


def _syms(*dims) -> set:
    out = set()
    for d in dims:
        out |= set(d.syms)
    return out


def _all_syms(*infos) -> set:
    return _syms(*(d for i in infos for d in i.shape))


def _none(*_):
    return None


# ---- pointwise: unary --------------------------------------------------------

def unary(name, expr, dtypes=_ANY, result=lambda dt: dt, params=None, check=None, doc=""):
    """A pointwise op of one tensor; `expr` formats {a} and the params."""
    return OPS.add(OpSpec(
        name=name, family="pointwise", arity=1,
        accepts=lambda a: a.dtype in dtypes,
        params=(lambda args: params(args[0])) if params else (lambda args: st.just({})),
        check=lambda args, p: (None if args[0].dtype in dtypes else f"{name} does not take {args[0].dtype}")
        or (check(args[0], p) if check else None),
        infer=lambda args, p, out: _fresh(args[0], out, dtype=result(args[0].dtype)),
        render=lambda names, p, infos: expr.format(a=names[0], **{k: py_literal(v) for k, v in p.items()}),
        doc=doc or expr,
    ))


_same = lambda dt: dt
_flt = D.floating_result
_to_bool = lambda dt: "bool"

unary("relu", "torch.relu({a})", _NUMERIC)
unary("sigmoid", "torch.sigmoid({a})", _ANY, _flt)
unary("tanh", "torch.tanh({a})", _ANY, _flt)
unary("exp", "torch.exp({a})", _ANY, _flt)
unary("log1p_abs", "torch.log1p({a}.abs())", _NUMERIC, _flt, doc="log1p on its safe domain")
unary("abs", "torch.abs({a})", _NUMERIC)
unary("neg", "torch.neg({a})", _NUMERIC)
unary("sqrt_abs", "torch.sqrt({a}.abs())", _NUMERIC, _flt, doc="sqrt on its safe domain")
unary("sin", "torch.sin({a})", _ANY, _flt)
unary("cos", "torch.cos({a})", _ANY, _flt)
unary("floor", "torch.floor({a})", _NUMERIC)
unary("ceil", "torch.ceil({a})", _NUMERIC)
unary("trunc", "torch.trunc({a})", _NUMERIC)
unary("round", "torch.round({a})", _NUMERIC)
unary("frac", "torch.frac({a})", _FLOAT)
unary("erf", "torch.erf({a})", _ANY, _flt)
unary("expm1", "torch.expm1({a})", _ANY, _flt)
unary("atan", "torch.atan({a})", _ANY, _flt)
unary("reciprocal", "torch.reciprocal({a})", _ANY, _flt)
unary("rsqrt_abs", "torch.rsqrt({a}.abs())", _NUMERIC, _flt, doc="rsqrt on its safe domain")
unary("sign", "torch.sign({a})", _ANY)
unary("square", "torch.square({a})", _NUMERIC)
unary("gelu", "F.gelu({a})", _FLOAT)
unary("silu", "F.silu({a})", _FLOAT)
unary("softplus", "F.softplus({a})", _FLOAT)
unary("elu", "F.elu({a})", _FLOAT)
unary("hardsigmoid", "F.hardsigmoid({a})", _FLOAT)
unary("leaky_relu", "F.leaky_relu({a}, 0.1)", _FLOAT)
unary("nan_to_num", "torch.nan_to_num({a})", _ANY)
unary("logical_not", "torch.logical_not({a})", _ANY, _to_bool)
unary("bitwise_not", "torch.bitwise_not({a})", _INTLIKE)
unary("isnan", "torch.isnan({a})", _ANY, _to_bool)
unary("signbit", "torch.signbit({a})", _NUMERIC, _to_bool)

_FLOAT_BOUNDS = [(-1.0, 1.0), (0.0, 6.0), (-0.5, None), (None, 0.5)]
_INT_BOUNDS = [(-2, 2), (0, 3), (-1, None), (None, 1)]


def _clamp_params(a: ValueInfo):
    bounds = _FLOAT_BOUNDS if D.is_floating(a.dtype) else _INT_BOUNDS
    return st.sampled_from(bounds).map(lambda b: {"min": b[0], "max": b[1]})


def _clamp_check(a: ValueInfo, p):
    if p.get("min") is None and p.get("max") is None:
        return "clamp needs min or max"
    kinds = [type(v) for v in (p.get("min"), p.get("max")) if v is not None]
    if not D.is_floating(a.dtype) and float in kinds:
        return f"clamp of {a.dtype} with float bounds changes its dtype"
    return None


unary("clamp", "torch.clamp({a}, min={min}, max={max})", _NUMERIC, params=_clamp_params, check=_clamp_check,
      doc="torch.clamp with constant bounds")

_SCALARS_FLOAT = [1.0, 2.5, -0.5, 0.0, 1e4, float("inf")]
_SCALARS_INT = [1, 2, -3, 0]


def _scalar_for(dt: str):
    return st.sampled_from(_SCALARS_FLOAT if D.is_floating(dt) else _SCALARS_INT)


def scalar_binary(name, expr, dtypes=_NUMERIC, result=None, doc=""):
    """tensor <op> python scalar; the scalar's kind follows the tensor's."""
    return unary(
        name, expr, dtypes,
        result=lambda dt: result(dt) if result else dt,
        params=lambda a: _scalar_for(a.dtype).map(lambda s: {"s": s}),
        check=lambda a, p: None if isinstance(p.get("s"), (int, float)) else "scalar param s must be a number",
        doc=doc or expr,
    )


scalar_binary("add_scalar", "({a} + {s})")
scalar_binary("mul_scalar", "({a} * {s})")
scalar_binary("sub_scalar", "({a} - {s})")
scalar_binary("div_scalar", "({a} / {s})", result=_flt)
scalar_binary("pow_scalar", "torch.pow({a}, 2)", _FLOAT)
scalar_binary("where_scalar", "torch.where({a} > 0, {a}, {s})")
scalar_binary("maximum_scalar", "torch.clamp_min({a}, {s})")


def _cast_targets(dt: str):
    # float -> int casts of NaN/inf/out-of-range values are undefined behaviour,
    # so they are never drawn.
    if D.is_floating(dt):
        return list(D.FLOATING) + ["bool"]
    return list(D.ALL)


def _cast_check(a, p):
    to = p.get("to")
    if to not in D.ALL:
        return f"cast target {to!r} is not a dtype"
    if D.is_floating(a.dtype) and to in D.INTEGRAL:
        return "float to int casts are undefined for NaN/inf and never drawn"
    return None


OPS.add(OpSpec(
    name="cast", family="pointwise", arity=1,
    accepts=lambda a: True,
    params=lambda args: st.sampled_from(_cast_targets(args[0].dtype)).map(lambda t: {"to": t}),
    check=lambda args, p: _cast_check(args[0], p),
    infer=lambda args, p, out: _fresh(args[0], out, dtype=p["to"]),
    render=lambda n, p, i: f"{n[0]}.to(torch.{p['to']})",
    doc="explicit dtype cast",
))


# ---- pointwise: binary (tensor, tensor) with broadcasting ---------------------

def binary(name, expr, dtypes=_ANY, result=D.promote, pair_ok=None, doc=""):
    """A pointwise op of two broadcastable tensors."""
    def ok(a, b):
        return (b.dtype in dtypes and broadcastable(a.shape, b.shape)
                and (pair_ok is None or pair_ok(a.dtype, b.dtype)))

    def check(args, p):
        a, b = args
        if a.dtype not in dtypes or b.dtype not in dtypes:
            return f"{name} does not take {a.dtype} and {b.dtype}"
        if not broadcastable(a.shape, b.shape):
            return f"{name}: shapes {[d.key for d in a.shape]} and {[d.key for d in b.shape]} do not broadcast"
        if pair_ok is not None and not pair_ok(a.dtype, b.dtype):
            return f"{name} does not take {a.dtype} with {b.dtype}"
        return None

    return OPS.add(OpSpec(
        name=name, family="binary", arity=2,
        accepts=lambda a: a.dtype in dtypes, pair=ok,
        params=lambda args: st.just({}), check=check,
        infer=lambda args, p, out: _fresh(args[0], out, shape=broadcast_shape(args[0].shape, args[1].shape),
                                          dtype=result(args[0].dtype, args[1].dtype)),
        render=lambda n, p, i: expr.format(a=n[0], b=n[1]),
        # broadcasting two different tensors relates their sizes: a guard.
        guards=lambda args, p: _all_syms(*args),
        doc=doc or expr.format(a="a", b="b"),
    ))


binary("add", "({a} + {b})")
binary("sub", "({a} - {b})", _NUMERIC)
binary("mul", "({a} * {b})")
binary("div", "({a} / {b})", result=lambda x, y: D.floating_result(D.promote(x, y)))
binary("maximum", "torch.maximum({a}, {b})")
binary("minimum", "torch.minimum({a}, {b})")
binary("atan2", "torch.atan2({a}, {b})", result=lambda x, y: D.floating_result(D.promote(x, y)))
binary("eq", "({a} == {b})", result=lambda x, y: "bool")
binary("lt", "({a} < {b})", result=lambda x, y: "bool")
binary("logical_and", "torch.logical_and({a}, {b})", result=lambda x, y: "bool")
binary("where", "torch.where({a} > 0, {a}, {b})", _NUMERIC, doc="where(a > 0, a, b)")
binary("bitwise_xor", "({a} ^ {b})", _INTLIKE)


# ---- pads ----------------------------------------------------------------------

PAD_MODES = ("constant", "reflect", "replicate", "circular")
_PAD_VALUES_FLOAT = [0.0, 1.0, -2.5, float("-inf")]
_PAD_VALUES_INT = [0, 1, -3]


def _pad_dims(a: ValueInfo, pairs: int):
    """Dims padded by `pairs` width pairs: the last `pairs` dims, innermost first."""
    return [a.rank - 1 - i for i in range(pairs)]


def _mode_rank_ok(mode, rank, pairs):
    if mode == "constant":
        return 1 <= pairs <= rank
    return rank in (pairs + 1, pairs + 2)


def _pad_variant_ok(mode, a: ValueInfo, pairs: int) -> bool:
    """Rank, dtype and sizes allow `mode` padding the last `pairs` dims. Non-constant
    modes need every dim non-empty at every call, except a leading batch dim."""
    if not _mode_rank_ok(mode, a.rank, pairs):
        return False
    if mode == "constant":
        return True
    if mode in ("reflect", "replicate") and a.dtype == "bool":
        return False
    batch = 1 if a.rank == pairs + 2 else 0
    return all(d.min > 0 for d in a.shape[batch:])


def _width_bounds(mode, dim: Dim, other=None):
    """Per-call [lo, hi] for one width of a pad on `dim`; `other` is the
    already chosen opposite width of a constant pad (crops must leave >= 0)."""
    v = dim.values
    if mode == "constant":
        # eager crops before it pads: the crops alone must leave >= 0
        used = other if other is not None else (0,) * len(v)
        return tuple(-(x + min(u, 0)) for x, u in zip(v, used)), (4,) * len(v)
    if mode == "reflect":
        return (0,) * len(v), tuple(x - 1 for x in v)
    if mode == "circular":
        return (0,) * len(v), tuple(v)
    return (0,) * len(v), (4,) * len(v)


def _pad_params(a: ValueInfo):
    modes = [m for m in PAD_MODES if _pad_mode_possible(m, a)]

    @st.composite
    def draw(draw_):
        mode = draw_(st.sampled_from(modes))
        pairs = draw_(st.sampled_from([p for p in (1, 2, 3) if _pad_variant_ok(mode, a, p)]))
        ws = []
        for d in _pad_dims(a, pairs):
            lo, hi = _width_bounds(mode, a.shape[d])
            left = draw_(widths(a, lo, hi))
            lo, hi = _width_bounds(mode, a.shape[d], width_values(left, a) if mode == "constant" else None)
            right = draw_(widths(a, lo, hi))
            ws += [left, right]
        p = {"mode": mode, "pad": ws}
        if mode == "constant":
            vals = _PAD_VALUES_FLOAT if D.is_floating(a.dtype) else _PAD_VALUES_INT
            p["value"] = draw_(st.sampled_from(vals if a.dtype != "bool" else [0, 1]))
        return p

    return draw()


def _pad_mode_possible(mode, a: ValueInfo):
    return any(_pad_variant_ok(mode, a, p) for p in (1, 2, 3))


def _pad_check(args, p):
    a = args[0]
    mode, ws = p.get("mode"), p.get("pad")
    if mode not in PAD_MODES:
        return f"pad mode {mode!r} is not one of {PAD_MODES}"
    if not isinstance(ws, list) or not ws or len(ws) % 2:
        return "pad widths must be a non-empty list of even length"
    pairs = len(ws) // 2
    if not _pad_variant_ok(mode, a, pairs):
        return f"{mode} pad of {pairs} dims does not take a rank-{a.rank} {a.dtype} tensor with these sizes"
    for w in ws:
        if (r := check_width(w, a)):
            return r
    for i, d in enumerate(_pad_dims(a, pairs)):
        lv, rv = width_values(ws[2 * i], a), width_values(ws[2 * i + 1], a)
        lo, hi = _width_bounds(mode, a.shape[d])
        if mode == "constant":
            if any(x + min(l, 0) + min(r, 0) < 0 for x, l, r in zip(a.shape[d].values, lv, rv)):
                return f"constant pad crops dim {d} below zero at some call"
            continue
        for wv in (lv, rv):
            if any(not (l <= w <= h) for w, l, h in zip(wv, lo, hi)):
                return f"{mode} pad width out of range for dim {d} at some call"
    return None


def _pad_infer(args, p, out):
    a = args[0]
    shape = list(a.shape)
    ws = p["pad"]
    for i, d in enumerate(_pad_dims(a, len(ws) // 2)):
        for w in (ws[2 * i], ws[2 * i + 1]):
            if isinstance(w, int):
                shape[d] = shape[d].plus(w)
            else:
                src = a.shape[w["dim"]]
                shape[d] = shape[d].plus(src.mapped(f"//{w['div']}", lambda v, k=w["div"]: v // k).plus(w["add"]))
    return _fresh(a, out, shape=tuple(shape))


def _pad_render(n, p, infos):
    ws = ", ".join(render_width(w, n[0]) for w in p["pad"])
    if p["mode"] == "constant":
        v = p.get("value", 0)
        return f"F.pad({n[0]}, ({ws},)" + (f", value={py_literal(v)})" if v else ")")
    return f"F.pad({n[0]}, ({ws},), mode={p['mode']!r})"


def _pad_guards(args, p):
    a = args[0]
    ws = p["pad"]
    g = set()
    for i, d in enumerate(_pad_dims(a, len(ws) // 2)):
        l, r = ws[2 * i], ws[2 * i + 1]
        crops = any(isinstance(w, int) and w < 0 or isinstance(w, dict) for w in (l, r))
        if p["mode"] != "constant" or crops:
            g |= set(a.shape[d].syms) | width_syms(l, a) | width_syms(r, a)
    return g


OPS.add(OpSpec(
    name="pad", family="pad", arity=1,
    accepts=lambda a: a.rank >= 1 and any(_pad_mode_possible(m, a) for m in PAD_MODES),
    params=lambda args: _pad_params(args[0]), check=_pad_check, infer=_pad_infer, render=_pad_render,
    guards=_pad_guards,
    doc="F.pad, all four modes; negative constant widths crop; widths may depend on sizes",
))


# ---- views -------------------------------------------------------------------

def view_op(name, accepts, params, check, shape_fn, render, overlapping=None, guards=None, inputs_only=False, doc=""):
    return OPS.add(OpSpec(
        name=name, family="view", arity=1, accepts=accepts,
        params=lambda args: params(args[0]), check=lambda args, p: check(args[0], p),
        infer=lambda args, p, out: _view(args[0], shape_fn(args[0], p),
                                         overlapping=(overlapping(args[0], p) if overlapping else args[0].overlapping)),
        render=lambda n, p, i: render(n[0], p, i[0]),
        guards=(lambda args, p: guards(args[0], p)) if guards else (lambda args, p: set()),
        inputs_only=inputs_only, doc=doc,
    ))


def _dim_in(a, d):
    return isinstance(d, int) and not isinstance(d, bool) and -a.rank <= d < a.rank


_SLICE_BOUNDS = [None, 1, -1, 2, 0, -2, 3]


def _slice_params(a):
    return st.fixed_dictionaries({
        "dim": st.integers(-a.rank, -1),
        "start": st.sampled_from(_SLICE_BOUNDS),
        "stop": st.sampled_from(_SLICE_BOUNDS),
        "step": st.sampled_from([1, 2, 3]),
    })


def _slice_check(a, p):
    if not _dim_in(a, p.get("dim")) or p["dim"] >= 0:
        return f"slice dim {p.get('dim')!r} must be negative and in range for rank {a.rank}"
    if not isinstance(p.get("step"), int) or p["step"] < 1:
        return "slice step must be a positive int"
    return None


def _slice_shape(a, p):
    d = norm_dim(p["dim"], a.rank)
    shape = list(a.shape)
    start, stop, step = p["start"], p["stop"], p["step"]
    shape[d] = a.shape[d].mapped(f"[{slice_text(start, stop, step)}]", lambda v: slice_len(v, start, stop, step))
    if start is None and stop is None and step == 1:
        shape[d] = a.shape[d]
    return shape


view_op("slice", lambda a: a.rank >= 1, _slice_params, _slice_check, _slice_shape,
        lambda x, p, a: f"{x}[{index_expr(p['dim'], slice_text(p['start'], p['stop'], p['step']))}]",
        doc="basic slicing with steps; bounds clamp, so any size is valid")


def _narrow_params(a):
    @st.composite
    def draw(draw_):
        d = draw_(st.integers(-a.rank, -1))
        dim = a.shape[d]
        start = draw_(st.integers(0, min(dim.min, 3)))
        lo = (0,) * len(dim.values)
        hi = tuple(v - start for v in dim.values)
        return {"dim": d, "start": start, "length": draw_(widths(a, lo, hi))}
    return draw()


def _narrow_check(a, p):
    if not _dim_in(a, p.get("dim")):
        return f"narrow dim {p.get('dim')!r} out of range for rank {a.rank}"
    if (r := check_width(p.get("length"), a)):
        return r
    vals = a.shape[p["dim"]].values
    lens = width_values(p["length"], a)
    if any(not (0 <= p["start"] and 0 <= n and p["start"] + n <= v) for v, n in zip(vals, lens)):
        return "narrow range leaves the dim at some call"
    return None


def _narrow_shape(a, p):
    shape = list(a.shape)
    w = p["length"]
    if isinstance(w, int):
        shape[p["dim"]] = Dim.literal(w, calls(a))
    else:
        shape[p["dim"]] = a.shape[w["dim"]].mapped(f"//{w['div']}", lambda v, k=w["div"]: v // k).plus(w["add"])
    return shape


view_op("narrow", lambda a: a.rank >= 1, _narrow_params, _narrow_check, _narrow_shape,
        lambda x, p, a: f"{x}.narrow({p['dim']}, {p['start']}, {render_width(p['length'], x)})",
        guards=lambda a, p: set(a.shape[p["dim"]].syms) | width_syms(p["length"], a),
        doc="narrow with a literal or size-relative length")


def _transpose_shape(a, p):
    s = list(a.shape)
    i, j = p["dims"]
    s[i], s[j] = s[j], s[i]
    return s


view_op("transpose", lambda a: a.rank >= 2,
        lambda a: st.sampled_from([(i, j) for i in range(a.rank) for j in range(i + 1, a.rank)][::-1]).map(
            lambda t: {"dims": list(t)}),
        lambda a, p: None if (isinstance(p.get("dims"), list) and len(p["dims"]) == 2
                              and all(_dim_in(a, d) for d in p["dims"])) else "transpose needs two dims in range",
        _transpose_shape, lambda x, p, a: f"{x}.transpose({p['dims'][0]}, {p['dims'][1]})")

view_op("permute", lambda a: a.rank >= 2,
        lambda a: st.permutations(list(range(a.rank))).map(lambda perm: {"perm": perm}),
        lambda a, p: None if sorted(p.get("perm", [])) == list(range(a.rank)) else "permute needs a permutation of all dims",
        lambda a, p: [a.shape[i] for i in p["perm"]],
        lambda x, p, a: f"{x}.permute({', '.join(map(str, p['perm']))})")

view_op("unsqueeze", lambda a: a.rank < MAX_RANK,
        lambda a: st.integers(0, a.rank).map(lambda d: {"dim": d}),
        lambda a, p: None if isinstance(p.get("dim"), int) and 0 <= p["dim"] <= a.rank else "unsqueeze dim out of range",
        lambda a, p: list(a.shape[:p["dim"]]) + [Dim.literal(1, calls(a))] + list(a.shape[p["dim"]:]),
        lambda x, p, a: f"{x}.unsqueeze({p['dim']})")


def _ones(a):
    return [i for i, d in enumerate(a.shape) if d.key == "1"]


view_op("squeeze", lambda a: bool(_ones(a)),
        lambda a: st.sampled_from(_ones(a)).map(lambda d: {"dim": d}),
        lambda a, p: None if p.get("dim") in _ones(a) else "squeeze needs a dim that is always 1",
        lambda a, p: [d for i, d in enumerate(a.shape) if i != p["dim"]],
        lambda x, p, a: f"{x}.squeeze({p['dim']})")


def _expand_shape(a, p):
    s = list(a.shape)
    s[p["dim"]] = Dim.literal(p["size"], calls(a))
    return s


view_op("expand", lambda a: bool(_ones(a)),
        lambda a: st.fixed_dictionaries({"dim": st.sampled_from(_ones(a)), "size": st.integers(2, 4)}),
        lambda a, p: None if p.get("dim") in _ones(a) and isinstance(p.get("size"), int) and p["size"] >= 1
        else "expand needs a dim that is always 1 and a positive size",
        _expand_shape,
        lambda x, p, a: f"{x}.expand({', '.join(str(p['size']) if i == p['dim'] else '-1' for i in range(a.rank))})",
        overlapping=lambda a, p: True,
        doc="expand a size-1 dim (the result overlaps itself: no in-place writes)")


def _flatten_shape(a, p):
    s, e = p["start"], p["end"]
    return list(a.shape[:s]) + [product_dim(list(a.shape[s:e + 1]), calls(a))] + list(a.shape[e + 1:])


view_op("flatten", lambda a: a.rank >= 2,
        lambda a: st.integers(0, a.rank - 2).flatmap(
            lambda s: st.integers(s + 1, a.rank - 1).map(lambda e: {"start": s, "end": e})),
        lambda a, p: None if isinstance(p.get("start"), int) and isinstance(p.get("end"), int)
        and 0 <= p["start"] < p["end"] < a.rank else "flatten needs 0 <= start < end < rank",
        _flatten_shape,
        lambda x, p, a: f"{x}.flatten({p['start']}, {p['end']})",
        overlapping=lambda a, p: a.overlapping,
        doc="flatten (a view, or a copy for non-contiguous inputs)")

view_op("reshape", lambda a: a.rank >= 1,
        lambda a: st.integers(0, a.rank - 1).map(lambda k: {"keep": k}),
        lambda a, p: None if isinstance(p.get("keep"), int) and 0 <= p["keep"] < a.rank else "reshape keep out of range",
        lambda a, p: list(a.shape[:p["keep"]]) + [product_dim(list(a.shape[p["keep"]:]), calls(a))],
        lambda x, p, a: f"{x}.reshape(" + ", ".join(
            [f"{x}.shape[{i}]" for i in range(p["keep"])]
            + [" * ".join(f"{x}.shape[{i}]" for i in range(p["keep"], a.rank))]) + ")",
        doc="reshape keeping the leading dims and merging the rest (sizes spelled out: -1 is ambiguous at numel 0)")


def _as_strided_shape(a, p):
    out = []
    for i in p["perm"]:
        d = a.shape[i]
        out.append(d.mapped("//2", lambda v: v // 2) if i == p.get("halve") else d)
    return out


def _as_strided_render(x, p, a):
    sizes = ", ".join(f"{x}.shape[{i}]" + (" // 2" if i == p.get("halve") else "") for i in p["perm"])
    strides = ", ".join(f"{x}.stride({i})" for i in p["perm"])
    return f"{x}.as_strided(({sizes},), ({strides},), {x}.storage_offset())"


view_op("as_strided", lambda a: a.rank >= 1,
        lambda a: st.fixed_dictionaries({
            "perm": st.permutations(list(range(a.rank))),
            "halve": st.none() | st.integers(0, a.rank - 1)}),
        lambda a, p: None if sorted(p.get("perm", [])) == list(range(a.rank))
        and (p.get("halve") is None or 0 <= p["halve"] < a.rank) else "as_strided needs a permutation and a dim to halve",
        _as_strided_shape, _as_strided_render, inputs_only=True,
        doc="as_strided on a program input: its own sizes/strides permuted, one size maybe halved")


# ---- reductions ----------------------------------------------------------------

def reduction(name, fn, dtypes, result, multi_dim=True, nonempty=False):
    def dims_of(a, p):
        d = p.get("dim")
        if d is None:
            return list(range(a.rank))
        return [norm_dim(x, a.rank) for x in (d if isinstance(d, list) else [d])]

    def params(args):
        a = args[0]
        ok = [i for i in range(a.rank) if not nonempty or a.shape[i].min > 0]
        options = []
        if ok:
            options.append(st.sampled_from([i - a.rank for i in ok][::-1]))
        if len(ok) == a.rank:
            options.append(st.none())
        if multi_dim and len(ok) >= 2:
            options.append(st.lists(st.sampled_from(ok), min_size=2, max_size=len(ok), unique=True).map(sorted))
        return st.fixed_dictionaries({"dim": st.one_of(options), "keepdim": st.booleans()})

    def check(args, p):
        a = args[0]
        if a.dtype not in dtypes:
            return f"{name} does not take {a.dtype}"
        d = p.get("dim")
        ds = d if isinstance(d, list) else ([] if d is None else [d])
        if not all(_dim_in(a, x) for x in ds):
            return f"{name} dim {d!r} out of range for rank {a.rank}"
        if isinstance(d, list) and (not multi_dim or not d or len(set(norm_dim(x, a.rank) for x in d)) != len(d)):
            return f"{name} takes {'one dim' if not multi_dim else 'distinct dims'}"
        if nonempty and any(a.shape[i].min == 0 for i in dims_of(a, p)):
            return f"{name} over a dim that is empty at some call"
        return None

    def infer(args, p, out):
        a = args[0]
        red = set(dims_of(a, p))
        if p.get("dim") is None:
            shape = []
        elif p.get("keepdim"):
            shape = [Dim.literal(1, calls(a)) if i in red else d for i, d in enumerate(a.shape)]
        else:
            shape = [d for i, d in enumerate(a.shape) if i not in red]
        return _fresh(a, out, shape=tuple(shape), dtype=result(a.dtype))

    def render(n, p, infos):
        d = p.get("dim")
        if d is None:
            return f"{fn}({n[0]})"
        dim = f"({', '.join(map(str, d))})" if isinstance(d, list) else str(d)
        return f"{fn}({n[0]}, dim={dim}" + (", keepdim=True)" if p.get("keepdim") else ")")

    return OPS.add(OpSpec(
        name=name, family="reduction", arity=1,
        accepts=lambda a: a.dtype in dtypes and (not nonempty or any(d.min > 0 for d in a.shape) or a.rank == 0),
        params=params,
        check=check, infer=infer, render=render,
        doc=f"{fn} over one dim, several or all; keepdim both ways",
    ))


reduction("sum", "torch.sum", _ANY, D.sum_result)
reduction("mean", "torch.mean", _FLOAT, lambda dt: dt)
reduction("amax", "torch.amax", _ANY, lambda dt: dt, nonempty=True)
reduction("amin", "torch.amin", _ANY, lambda dt: dt, nonempty=True)
reduction("prod", "torch.prod", _ANY, D.sum_result, multi_dim=False)


# ---- cat -----------------------------------------------------------------------

def _cat_dims(a: ValueInfo, b: ValueInfo) -> list[int]:
    if a.rank != b.rank or a.rank == 0:
        return []
    diff = [i for i in range(a.rank) if a.shape[i].key != b.shape[i].key]
    if len(diff) > 1:
        return []
    return diff or list(range(a.rank))


def _cat_infer(args, p, out):
    a, b = args
    d = norm_dim(p["dim"], a.rank)
    shape = list(a.shape)
    shape[d] = a.shape[d].plus(b.shape[d])
    return _fresh(a, out, shape=tuple(shape), dtype=D.promote(a.dtype, b.dtype))


OPS.add(OpSpec(
    name="cat", family="cat", arity=2,
    accepts=lambda a: a.rank >= 1, pair=lambda a, b: bool(_cat_dims(a, b)),
    params=lambda args: st.sampled_from(_cat_dims(*args)[::-1]).map(lambda d: {"dim": d - args[0].rank}),
    check=lambda args, p: None if isinstance(p.get("dim"), int) and _dim_in(args[0], p["dim"])
    and norm_dim(p["dim"], args[0].rank) in _cat_dims(*args) else "cat: shapes differ outside the cat dim",
    infer=_cat_infer,
    render=lambda n, p, i: f"torch.cat([{n[0]}, {n[1]}], dim={p['dim']})",
    guards=lambda args, p: _all_syms(*args),
    doc="cat of two tensors equal outside one dim (often a tensor and its padded or sliced self)",
))


# ---- in-place ------------------------------------------------------------------

def inplace(name, accepts, params, check, render, pair=None, guards=None, doc=""):
    """Writes its first argument in place; the result aliases it."""
    return OPS.add(OpSpec(
        name=name, family="inplace", arity=2 if pair else 1, mutates=True,
        accepts=accepts, pair=pair, params=params,
        check=lambda args, p: ("in-place write into a self-overlapping tensor" if args[0].overlapping else None)
        or check(args, p),
        infer=lambda args, p, out: args[0],
        render=render,
        guards=guards or (lambda args, p: set()),
        doc=doc,
    ))


def _other_ok(a: ValueInfo, b: ValueInfo, cast=True) -> bool:
    """b may be read while a is written: no shared storage, broadcasts into a."""
    return (b.root != a.root and broadcasts_to(b.shape, a.shape)
            and (not cast or D.can_cast(D.promote(a.dtype, b.dtype), a.dtype)))


inplace("relu_", lambda a: a.dtype != "bool", lambda args: st.just({}),
        lambda args, p: "relu_ does not take bool" if args[0].dtype == "bool" else None,
        lambda n, p, i: f"{n[0]}.relu_()")
inplace("clamp_", lambda a: a.dtype != "bool", lambda args: _clamp_params(args[0]),
        lambda args, p: _clamp_check(args[0], p),
        lambda n, p, i: f"{n[0]}.clamp_(min={py_literal(p['min'])}, max={py_literal(p['max'])})")
inplace("add_scalar_", lambda a: a.dtype != "bool", lambda args: _scalar_for(args[0].dtype).map(lambda s: {"s": s}),
        lambda args, p: None if D.can_cast(D.promote_scalar(args[0].dtype, p.get("s")), args[0].dtype)
        else "in-place add of a scalar that does not fit the dtype",
        lambda n, p, i: f"{n[0]}.add_({py_literal(p['s'])})")
inplace("mul_scalar_", lambda a: a.dtype != "bool", lambda args: _scalar_for(args[0].dtype).map(lambda s: {"s": s}),
        lambda args, p: None if D.can_cast(D.promote_scalar(args[0].dtype, p.get("s")), args[0].dtype)
        else "in-place mul of a scalar that does not fit the dtype",
        lambda n, p, i: f"{n[0]}.mul_({py_literal(p['s'])})")


def _pair_check(name, cast=True):
    def check(args, p):
        a, b = args
        if not _other_ok(a, b, cast):
            return f"{name}: operand shares storage, does not broadcast into the target, or does not cast to it"
        return None
    return check


inplace("add_", lambda a: a.dtype != "bool", lambda args: st.just({}), _pair_check("add_"),
        lambda n, p, i: f"{n[0]}.add_({n[1]})", pair=lambda a, b: _other_ok(a, b) and a.dtype != "bool",
        guards=lambda args, p: _all_syms(*args))
inplace("mul_", lambda a: True, lambda args: st.just({}), _pair_check("mul_"),
        lambda n, p, i: f"{n[0]}.mul_({n[1]})", pair=lambda a, b: _other_ok(a, b),
        guards=lambda args, p: _all_syms(*args))
inplace("copy_", lambda a: True, lambda args: st.just({}), _pair_check("copy_", cast=False),
        lambda n, p, i: f"{n[0]}.copy_({n[1]})", pair=lambda a, b: _other_ok(a, b, cast=False),
        guards=lambda args, p: _all_syms(*args))


def _setitem_params(args):
    a = args[0]
    return st.fixed_dictionaries({
        "dim": st.integers(-a.rank, -1),
        "start": st.sampled_from(_SLICE_BOUNDS),
        "stop": st.sampled_from(_SLICE_BOUNDS),
        "step": st.sampled_from([1, 2]),
        "value": _scalar_for(a.dtype) if a.dtype != "bool" else st.sampled_from([True, False]),
    })


def _setitem_check(args, p):
    a = args[0]
    if not _dim_in(a, p.get("dim")) or p["dim"] >= 0:
        return f"slice assignment dim {p.get('dim')!r} must be negative and in range for rank {a.rank}"
    if not D.can_cast(D.promote_scalar(a.dtype, p.get("value")), a.dtype):
        return "slice assignment of a value that does not fit the dtype"
    return None


def _setitem_render(n, p, infos):
    idx = index_expr(p["dim"], slice_text(p["start"], p["stop"], p["step"]))
    return ([f"{n[0]}[{idx}] = {py_literal(p['value'])}"], n[0])


inplace("slice_assign", lambda a: a.rank >= 1, _setitem_params, _setitem_check, _setitem_render,
        doc="x[..., a:b:c] = scalar (index-style slice assignment)")
