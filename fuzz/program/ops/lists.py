"""The _foreach_* family: ops over lists of tensors, out of place and in place.

The list is the two pieces torch.tensor_split makes of a value at a literal index along one dim (views at an
offset, either maybe empty, and always two of them, so the list's length never depends on a size). An
out-of-place op's result is its pieces cat back along that dim, so every piece stays live; an in-place op
writes every piece, that is its first operand, which it returns. A second operand is split the same way.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec, py_literal
from fuzz.program.ops.common import OPS, _NUMERIC, _dim_in, _fresh, drawn
from fuzz.program.ops.inplace import inplace

# unary: abs and neg keep any number; the others take floats (sqrt of abs: its safe domain)
_UNARY = ("abs", "neg", "exp", "sigmoid", "sqrt")
_FLOAT_UNARY = ("exp", "sigmoid", "sqrt")
_SCALAR = ("add", "mul", "sub", "div", "maximum")
_PAIR = ("add", "mul", "sub", "maximum", "lerp")
_PAIR_INPLACE = ("add", "mul", "lerp")
_SCALARS = {"float": (2.0, -0.5, 0.0, 1e4), "int": (2, -3, 1)}
_WEIGHTS = (0.5, 0.25, 1.5)


def _pieces(x: str, p) -> str:
    return f"torch.tensor_split({x}, ({p['at']},), dim={p['dim']})"


def _fns(a, inplace_: bool) -> list:
    return [f for f in _UNARY + _SCALAR if f not in _FLOAT_UNARY or D.is_floating(a.dtype)
            if not (inplace_ and f == "div" and not D.is_floating(a.dtype))]


def _scalar_params(a, inplace_: bool):
    def draw(d):
        fn = d(st.sampled_from(_fns(a, inplace_)))
        p = {"fn": fn, "dim": d(st.integers(-a.rank, -1)), "at": d(st.sampled_from([1, 2]))}
        if fn in _SCALAR:
            p["s"] = d(st.sampled_from(_SCALARS["float" if D.is_floating(a.dtype) else "int"]))
        return p
    return drawn(draw)


def _result(dt: str, p) -> str:
    fn = p["fn"]
    if fn in _FLOAT_UNARY:
        return D.floating_result(dt)
    if fn in _UNARY:
        return dt
    out = D.promote_scalar(dt, p["s"])
    return D.floating_result(out) if fn == "div" else out


def _split_check(a, p) -> str | None:
    if a.rank < 1 or not _dim_in(a, p.get("dim")) or p["dim"] >= 0:
        return f"a foreach op's list is split along a negative dim in range, got {p.get('dim')!r}"
    if p.get("at") not in (1, 2) or type(p["at"]) is not int:
        return "a foreach op's list is split at index 1 or 2"
    return None


def _scalar_check(a, p, inplace_: bool) -> str | None:
    fn = p.get("fn")
    if fn not in _UNARY + _SCALAR:
        return f"foreach fn {fn!r} is not one of {_UNARY + _SCALAR}"
    if a.dtype == "bool":
        return "foreach ops here take numbers, not bool"
    if fn in _FLOAT_UNARY and not D.is_floating(a.dtype):
        return f"_foreach_{fn} is drawn on floats only"
    if fn in _SCALAR:
        s = p.get("s")
        if type(s) not in (int, float) or s not in _SCALARS["float"] + _SCALARS["int"]:
            return f"foreach scalar s must be one of {_SCALARS['float'] + _SCALARS['int']}"
    elif "s" in p:
        return f"_foreach_{fn} takes no scalar"
    if inplace_ and not D.can_cast(_result(a.dtype, p), a.dtype):
        return f"_foreach_{fn}_ of a {a.dtype} list: its result does not cast back"
    return _split_check(a, p)


def _call(fn: str, lists: str, p, inplace_: bool) -> str:
    under = "_" if inplace_ else ""
    if fn == "sqrt":  # on the safe domain: abs first
        return f"torch._foreach_sqrt{under}(torch._foreach_abs{under}({lists}))" if not inplace_ else None
    extra = f", {py_literal(p['s'])}" if fn in _SCALAR else ""
    return f"torch._foreach_{fn}{under}({lists}{extra})"


def _render_out(n, p, i):
    return f"torch.cat({_call(p['fn'], _pieces(n[0], p), p, False)}, dim={p['dim']})"


def _render_in(n, p, i):
    lists = _pieces(n[0], p)
    if p["fn"] == "sqrt":  # the pieces made anew for each: no name the program might hold
        return ([f"torch._foreach_abs_({lists})", f"torch._foreach_sqrt_({lists})"], n[0])
    return ([_call(p["fn"], lists, p, True)], n[0])


def _numeric_ranked(a) -> bool:
    return a.dtype in _NUMERIC and a.rank >= 1


OPS.add(OpSpec(
    name="foreach", family="pointwise", arity=1, accepts=_numeric_ranked,
    params=lambda args: _scalar_params(args[0], False), check=lambda args, p: _scalar_check(args[0], p, False),
    infer=lambda args, p, out: _fresh(args[0], out, dtype=_result(args[0].dtype, p)), render=_render_out,
    guards=lambda args, p: set(args[0].shape[p["dim"]].syms), api="torch._foreach_*", label_fn=lambda p: f"torch._foreach_{p.get('fn', 'add')}", dtypes=_NUMERIC,
    doc="a unary or scalar _foreach_ op (abs, neg, exp, sigmoid, sqrt; add, mul, sub, div, maximum) over the two "
        "tensor_split pieces of a value, cat back"))

inplace("foreach_", _numeric_ranked, lambda args: _scalar_params(args[0], True),
        lambda args, p: _scalar_check(args[0], p, True), _render_in,
        guards=lambda args, p: set(args[0].shape[p["dim"]].syms), api="torch._foreach_*_", label_fn=lambda p: f"torch._foreach_{p.get('fn', 'add')}_",
        doc="an in-place unary or scalar _foreach_ op over the two tensor_split pieces of a value")


# ---- two lists: the pieces of two values of one shape --------------------------------------------------

def _same_shape(a, b) -> bool:
    return a.rank == b.rank and a.rank >= 1 and all(x.key == y.key for x, y in zip(a.shape, b.shape))


def _pair_fits(a, b, inplace_: bool) -> bool:
    if not (_same_shape(a, b) and a.dtype in _NUMERIC and b.dtype in _NUMERIC):
        return False
    return b.root != a.root and D.can_cast(D.promote(a.dtype, b.dtype), a.dtype) if inplace_ else True


def _pair_params(args, inplace_: bool):
    a, b = args
    lerp_ok = D.is_floating(a.dtype) and a.dtype == b.dtype
    fns = [f for f in (_PAIR_INPLACE if inplace_ else _PAIR) if f != "lerp" or lerp_ok]
    if not inplace_ and a.dtype == "bool":
        fns = [f for f in fns if f != "sub"]

    def draw(d):
        p = {"fn": d(st.sampled_from(fns)), "dim": d(st.integers(-a.rank, -1)), "at": d(st.sampled_from([1, 2]))}
        if p["fn"] == "lerp":
            p["w"] = d(st.sampled_from(_WEIGHTS))
        return p
    return drawn(draw)


def _pair_check(args, p, inplace_: bool) -> str | None:
    a, b = args
    fn = p.get("fn")
    if fn not in (_PAIR_INPLACE if inplace_ else _PAIR):
        return f"foreach pair fn {fn!r} is not one of {_PAIR_INPLACE if inplace_ else _PAIR}"
    if not _pair_fits(a, b, inplace_):
        return "a foreach pair takes two numeric values of one shape (in place: apart, casting back)"
    if fn == "lerp":
        if not (D.is_floating(a.dtype) and a.dtype == b.dtype):
            return "_foreach_lerp takes two floating lists of one dtype"
        if type(p.get("w")) is not float or p["w"] not in _WEIGHTS:
            return f"_foreach_lerp weight w must be one of {_WEIGHTS}"
    elif "w" in p:
        return f"_foreach_{fn} takes no weight"
    return _split_check(a, p)


def _pair_call(n, p, inplace_: bool) -> str:
    w = f", {py_literal(p['w'])}" if p["fn"] == "lerp" else ""
    return f"torch._foreach_{p['fn']}{'_' if inplace_ else ''}({_pieces(n[0], p)}, {_pieces(n[1], p)}{w})"


OPS.add(OpSpec(
    name="foreach_pair", family="binary", arity=2, accepts=_numeric_ranked,
    pair=lambda a, b: _pair_fits(a, b, False),
    params=lambda args: _pair_params(args, False), check=lambda args, p: _pair_check(args, p, False),
    infer=lambda args, p, out: _fresh(args[0], out, dtype=D.promote(args[0].dtype, args[1].dtype)),
    render=lambda n, p, i: f"torch.cat({_pair_call(n, p, False)}, dim={p['dim']})",
    guards=lambda args, p: {s for v in args for d in v.shape for s in d.syms},
    operand=lambda chosen: chosen[0].shape, api="torch._foreach_*", label_fn=lambda p: f"torch._foreach_{p.get('fn', 'add')}", dtypes=_NUMERIC,
    doc="a _foreach_ op of two lists (add, mul, sub, maximum, lerp): the tensor_split pieces of two values of "
        "one shape, cat back"))

inplace("foreach_pair_", _numeric_ranked, lambda args: _pair_params(args, True),
        lambda args, p: _pair_check(args, p, True), lambda n, p, i: ([_pair_call(n, p, True)], n[0]),
        pair=lambda a, b: _pair_fits(a, b, True),
        guards=lambda args, p: {s for v in args for d in v.shape for s in d.syms}, api="torch._foreach_*_", label_fn=lambda p: f"torch._foreach_{p.get('fn', 'add')}_",
        doc="an in-place _foreach_ op of two lists (add_, mul_, lerp_) over the pieces of two values of one shape")
