"""In-place writes into intermediates, inputs and views of inputs."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec, broadcast_operand, index_expr, py_literal, slice_text
from fuzz.program.ops.common import OPS
from fuzz.program.ops.common import (_SLICE_BOUNDS,
                                     _all_syms, _clamp_check, _clamp_params, _dim_in, _scalar_for)
from fuzz.program.symbolic import ValueInfo, broadcasts_to

# ---- in-place ------------------------------------------------------------------

def inplace(name, accepts, params, check, render, pair=None, guards=None, doc="", api=None, label_fn=None):
    # a fresh input of the target's shape and dtype: no shared storage, broadcasts, casts
    """Writes its first argument in place; the result aliases it."""
    return OPS.add(OpSpec(
        name=name, family="inplace", arity=2 if pair else 1, mutates=True,
        accepts=accepts, pair=pair, params=params,
        check=lambda args, p: ("in-place write into a self-overlapping tensor" if args[0].overlapping else None)
        or check(args, p),
        infer=lambda args, p, out: args[0],
        render=render,
        guards=guards or (lambda args, p: set()), operand=(broadcast_operand) if pair else None,
        api=f"Tensor.{name}" if api is None else api, label_fn=label_fn,
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
        lambda n, p, i: f"{n[0]}.add_({py_literal(p['s'])})", api="Tensor.add_")
inplace("mul_scalar_", lambda a: a.dtype != "bool", lambda args: _scalar_for(args[0].dtype).map(lambda s: {"s": s}),
        lambda args, p: None if D.can_cast(D.promote_scalar(args[0].dtype, p.get("s")), args[0].dtype)
        else "in-place mul of a scalar that does not fit the dtype",
        lambda n, p, i: f"{n[0]}.mul_({py_literal(p['s'])})", api="Tensor.mul_")


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
        api="Tensor.__setitem__", label_fn=lambda p: "slice assignment x[a:b] = v",
        doc="x[..., a:b:c] = scalar (index-style slice assignment)")
