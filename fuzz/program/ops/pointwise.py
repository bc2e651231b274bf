"""Pointwise ops: unary, with a scalar, casts, and binary with broadcasting."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec, api_of, broadcast_operand, py_literal
from fuzz.program.ops.common import OPS
from fuzz.program.ops.common import (_ANY, _FLOAT, _INTLIKE, _NUMERIC, _all_syms, _clamp_check, _clamp_params, _fresh, _scalar_for)
from fuzz.program.symbolic import broadcast_shape, broadcastable, broadcasts_to

# ---- pointwise: unary --------------------------------------------------------

def unary(name, expr, dtypes=_ANY, result=lambda dt: dt, params=None, check=None, doc="", api=None, decides=()):
    """A pointwise op of one tensor; `expr` formats {a} and the params. `decides`: OpSpec.decides."""
    return OPS.add(OpSpec(
        name=name, family="pointwise", arity=1,
        accepts=lambda a: a.dtype in dtypes,
        params=(lambda args: params(args[0])) if params else (lambda args: st.just({})),
        check=lambda args, p: (None if args[0].dtype in dtypes else f"{name} does not take {args[0].dtype}")
        or (check(args[0], p) if check else None),
        infer=lambda args, p, out: _fresh(args[0], out, dtype=result(args[0].dtype)),
        render=lambda names, p, infos: expr.format(a=names[0], **{k: py_literal(v) for k, v in p.items()}),
        api=api_of(expr) if api is None else api, dtypes=frozenset(dtypes), doc=doc or expr, decides=decides,
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
unary("floor", "torch.floor({a})", _NUMERIC, decides=(0,))
unary("ceil", "torch.ceil({a})", _NUMERIC, decides=(0,))
unary("trunc", "torch.trunc({a})", _NUMERIC, decides=(0,))
unary("round", "torch.round({a})", _NUMERIC, decides=(0,))
unary("frac", "torch.frac({a})", _FLOAT, decides=(0,))
unary("erf", "torch.erf({a})", _ANY, _flt)
unary("expm1", "torch.expm1({a})", _ANY, _flt)
unary("atan", "torch.atan({a})", _ANY, _flt)
unary("reciprocal", "torch.reciprocal({a})", _ANY, _flt)
unary("rsqrt_abs", "torch.rsqrt({a}.abs())", _NUMERIC, _flt, doc="rsqrt on its safe domain")
unary("sign", "torch.sign({a})", _ANY, decides=(0,))
unary("square", "torch.square({a})", _NUMERIC)
unary("gelu", "F.gelu({a})", _FLOAT)
unary("silu", "F.silu({a})", _FLOAT)
unary("softplus", "F.softplus({a})", _FLOAT)
unary("elu", "F.elu({a})", _FLOAT)
unary("hardsigmoid", "F.hardsigmoid({a})", _FLOAT)
unary("leaky_relu", "F.leaky_relu({a}, 0.1)", _FLOAT)
unary("nan_to_num", "torch.nan_to_num({a})", _ANY)
unary("logical_not", "torch.logical_not({a})", _ANY, _to_bool, decides=(0,))
unary("bitwise_not", "torch.bitwise_not({a})", _INTLIKE)
unary("isnan", "torch.isnan({a})", _ANY, _to_bool)
unary("signbit", "torch.signbit({a})", _NUMERIC, _to_bool, decides=(0,))

unary("clamp", "torch.clamp({a}, min={min}, max={max})", _NUMERIC, params=_clamp_params, check=_clamp_check,
      doc="torch.clamp with constant bounds")


def scalar_binary(name, expr, dtypes=_NUMERIC, result=None, doc="", decides=()):
    """tensor <op> python scalar; the scalar's kind follows the tensor's."""
    return unary(
        name, expr, dtypes,
        result=lambda dt: result(dt) if result else dt,
        params=lambda a: _scalar_for(a.dtype).map(lambda s: {"s": s}),
        check=lambda a, p: None if isinstance(p.get("s"), (int, float)) else "scalar param s must be a number",
        doc=doc or expr, decides=decides,
    )


scalar_binary("add_scalar", "({a} + {s})")
scalar_binary("mul_scalar", "({a} * {s})")
scalar_binary("sub_scalar", "({a} - {s})")
scalar_binary("div_scalar", "({a} / {s})", result=_flt)
scalar_binary("pow_scalar", "torch.pow({a}, 2)", _FLOAT)
scalar_binary("where_scalar", "torch.where({a} > 0, {a}, {s})", decides=(0,))
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
    render=lambda n, p, i: f"{n[0]}.to(torch.{p['to']})", api="Tensor.to",
    decides=(0,),  # to bool: a test for zero; to a narrower float: a rounding
    doc="explicit dtype cast",
))


# ---- pointwise: binary (tensor, tensor) with broadcasting ---------------------

def _ranked(a, b) -> tuple:
    """The dtypes a binary op's result is promoted from: a 0-d tensor beside one with dims counts only where its
    category is higher (int16 tensor + int64 0-d tensor is int16; + float64 0-d tensor is float64)."""
    if (a.rank == 0) == (b.rank == 0):
        return a.dtype, b.dtype
    zero, full = (a, b) if a.rank == 0 else (b, a)
    eff = full.dtype if D.category(zero.dtype) <= D.category(full.dtype) else zero.dtype
    return (eff, b.dtype) if a.rank == 0 else (a.dtype, eff)


def binary(name, expr, dtypes=_ANY, result=D.promote, pair_ok=None, doc="", render=None, api="", promotes=True,
           grad=True, decides=()):
    """A pointwise op of two broadcastable tensors; `render(names, infos)` overrides the
    expression where the text depends on the dtypes. `promotes`: its result's dtype comes from both
    operands, by eager's promotion (a 0-d operand counts less), not from the first alone."""
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
                                          dtype=result(*(_ranked(args[0], args[1]) if promotes
                                                         else (args[0].dtype, args[1].dtype)))),
        render=(lambda n, p, i: render(n, i)) if render else (lambda n, p, i: expr.format(a=n[0], b=n[1])),
        api=api or api_of(expr), dtypes=frozenset(dtypes),
        # broadcasting two different tensors relates their sizes: a guard.
        guards=lambda args, p: _all_syms(*args), operand=broadcast_operand,
        doc=doc or expr.format(a="a", b="b"), grad=grad, decides=decides,
    ))


binary("add", "({a} + {b})")
binary("sub", "({a} - {b})", _NUMERIC)
binary("mul", "({a} * {b})")
binary("div", "({a} / {b})", result=lambda x, y: D.floating_result(D.promote(x, y)))
binary("maximum", "torch.maximum({a}, {b})")
binary("minimum", "torch.minimum({a}, {b})")
binary("atan2", "torch.atan2({a}, {b})", result=lambda x, y: D.floating_result(D.promote(x, y)))
binary("eq", "({a} == {b})", result=lambda x, y: "bool", decides=(0, 1))
binary("lt", "({a} < {b})", result=lambda x, y: "bool", decides=(0, 1))
binary("logical_and", "torch.logical_and({a}, {b})", result=lambda x, y: "bool", decides=(0, 1))
binary("where", "torch.where({a} > 0, {a}, {b})", doc="where(a > 0, a, b)", decides=(0,))
binary("bitwise_xor", "({a} ^ {b})", _INTLIKE)





# ---- pointwise with their own promotion or rounding ----------------------------

def _safe(b: str, dt: str) -> str:
    """An integer divisor with 0 replaced by 1: integer division by zero raises in eager."""
    return b if D.is_floating(dt) else f"torch.where({b} == 0, 1, {b})"


def _divisor(b: str) -> str:
    """The dtype of the safe divisor: torch.where(b == 0, 1, b) of a bool b is int64
    (the 1 is an int), of a number b is b."""
    return "int64" if b == "bool" else b


def divlike(name, fn, extra="", grad=True):
    """fn(a, b[, extra]) with the divisor made safe for integer operands. bool operands
    promote as in eager (a bool dividend, or a divisor made int64); only bool with bool is refused
    by eager's kernels, and the safe divisor makes even that an int64 division."""
    def render(n, infos):
        return f"{fn}({n[0]}, {_safe(n[1], D.promote(infos[0].dtype, infos[1].dtype))}{extra})"
    return binary(name, fn + "({a}, {b}" + extra + ")", _ANY, result=lambda x, y: D.promote(x, _divisor(y)),
                  render=render, api=fn, grad=grad, decides=(0, 1))


divlike("floor_divide", "torch.floor_divide", grad=False)  # "derivative for aten::floor_divide is not implemented"
divlike("remainder", "torch.remainder")
divlike("fmod", "torch.fmod")
divlike("div_trunc", "torch.div", ", rounding_mode='trunc'")
divlike("div_floor", "torch.div", ", rounding_mode='floor'")
_float_result = lambda x, y: D.floating_result(D.promote(x, y))  # noqa: E731
# bool operands promote in these as eager promotes them (ldexp, copysign and the divisions took no bool before)
binary("copysign", "torch.copysign({a}, {b})", _ANY, result=_float_result, api="torch.copysign", decides=(1,))
binary("ldexp", "torch.ldexp({a}, {b})", _ANY, result=_float_result,
       render=lambda n, i: f"torch.ldexp({n[0]}, {n[1]}.to(torch.int32).clamp(-8, 8))" if not D.is_floating(i[1].dtype)
       else f"torch.ldexp({n[0]}, {n[1]}.round().clamp(-8, 8))", api="torch.ldexp", decides=(1,),
       doc="ldexp with exponents kept in [-8, 8] (2**large overflows to inf either way)")
binary("pow_tensor", "torch.pow({a}, {b})", _FLOAT, api="torch.pow",
       render=lambda n, i: f"torch.pow({n[0]}.abs(), {n[1]})", doc="|a| ** b with a tensor exponent")
_SHIFTABLE = frozenset(D.INTEGRAL)
binary("lshift", "({a} << {b})", _SHIFTABLE, render=lambda n, i: f"({n[0]} << ({n[1]} & 3))",
       api="torch.bitwise_left_shift", doc="a << (b & 3): shift counts stay below every width")
binary("rshift", "({a} >> {b})", _SHIFTABLE, render=lambda n, i: f"({n[0]} >> ({n[1]} & 3))",
       api="torch.bitwise_right_shift", doc="a >> (b & 3)")
binary("masked_fill", "{a}.masked_fill({b} > 0, 2)", result=lambda x, y: x,
       pair_ok=None, api="Tensor.masked_fill", promotes=False, decides=(1,),
       render=lambda n, i: f"{n[0]}.masked_fill({n[1]} > 0, {'2.5' if D.is_floating(i[0].dtype) else '2'})",
       doc="a.masked_fill(b > 0, v) with a broadcast mask")


def _ternary(name, render, api, doc, dtypes=_NUMERIC, decides=()):
    """A pointwise op of three broadcastable tensors of one dtype: the result has a's."""
    def fits2(a, b):
        return b.dtype == a.dtype and broadcasts_to(b.shape, a.shape)

    def fits3(a, b, c):
        return fits2(a, c)

    return OPS.add(OpSpec(
        name=name, family="binary", arity=3, accepts=lambda a: a.dtype in dtypes, pair=fits2, third=fits3,
        params=lambda args: st.just({}),
        check=lambda args, p: None if args[0].dtype in dtypes and fits2(*args[:2]) and fits3(*args)
        else f"{name}: operands must share a's dtype and broadcast to its shape",
        infer=lambda args, p, out: _fresh(args[0], out), render=lambda n, p, i: render(*n),
        guards=lambda args, p: _all_syms(*args), operand=broadcast_operand, api=api, doc=doc, decides=decides))


_ternary("clamp_tensor", lambda a, b, c: f"torch.clamp({a}, min={b}, max={c})", "torch.clamp",
         "clamp with tensor bounds (b may exceed c: max wins, as documented)")
_ternary("where_cond", lambda a, b, c: f"torch.where({c} > 0, {a}, {b})", "torch.where",
         "where with a condition from a third tensor", dtypes=_ANY - {"bool"}, decides=(2,))
