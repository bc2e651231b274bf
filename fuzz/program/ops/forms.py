"""Forms whose Inductor lowerings copy strided data or take a constant the program builds: index_fill (and
index_fill_), lerp with a scalar or a tensor weight, 0-d tensors built in the program (torch.tensor,
torch.full((), c), torch.scalar_tensor) fed to a scan or a reduction, and bool tensors in arithmetic with a
number (the forms eager takes; EAGER_REJECTS names the ones it refuses)."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec, broadcast_operand, py_literal
from fuzz.program.ops.common import OPS, _ANY, _FLOAT, _all_syms, _fresh, drawn
from fuzz.program.ops.indexing import _check, _idx, _indexable_dims, _op, _params
from fuzz.program.ops.inplace import inplace
from fuzz.program.symbolic import broadcast_shape, broadcastable

# ---- index_fill ------------------------------------------------------------------------------------------


def _fill_value(dt: str) -> str:
    return "2.5" if D.is_floating(dt) else "True" if dt == "bool" else "2"


_op("index_fill", _ANY, _params, _check, lambda a, p: a.shape,
    lambda x, a, p: f"{x}.index_fill({p['dim']}, {_idx(x, a, p)}, {_fill_value(a.dtype)})",
    "torch.index_fill", "index_fill with a made index (repeats too) and a constant")
inplace("index_fill_", lambda a: a.rank >= 1 and bool(_indexable_dims(a)), lambda args: _params(args[0]),
        lambda args, p: _check(args[0], p),
        lambda n, p, i: ([f"{n[0]}.index_fill_({p['dim']}, {_idx(n[0], i[0], p)}, {_fill_value(i[0].dtype)})"],
                         n[0]),
        guards=lambda args, p: set(args[0].shape[p["dim"]].syms), api="Tensor.index_fill_",
        doc="index_fill_ in place with a made index (repeats too) and a constant")


# ---- lerp: start and end of one floating dtype, a scalar weight or a tensor one --------------------------

_WEIGHTS = (0.5, 0.25, 1.5, -0.5)


def _lerp_pair(a, b) -> bool:
    return a.dtype in _FLOAT and b.dtype == a.dtype and broadcastable(a.shape, b.shape)


def _lerp_third(a, b, c) -> bool:
    return _lerp_pair(a, b) and c.dtype == a.dtype and broadcastable(broadcast_shape(a.shape, b.shape), c.shape)


OPS.add(OpSpec(
    name="lerp", family="binary", arity=2, accepts=lambda a: a.dtype in _FLOAT, pair=_lerp_pair,
    params=lambda args: st.sampled_from(_WEIGHTS).map(lambda w: {"w": w}),
    check=lambda args, p: (None if _lerp_pair(*args) else "lerp takes start and end of one floating dtype that "
                           "broadcast") or (None if type(p.get("w")) is float and p["w"] in _WEIGHTS
                                           else f"lerp weight w must be one of {_WEIGHTS}"),
    infer=lambda args, p, out: _fresh(args[0], out, shape=broadcast_shape(args[0].shape, args[1].shape)),
    render=lambda n, p, i: f"torch.lerp({n[0]}, {n[1]}, {py_literal(p['w'])})",
    guards=lambda args, p: _all_syms(*args), operand=broadcast_operand, api="torch.lerp", dtypes=_FLOAT,
    doc="lerp(start, end, w) with a scalar weight"))
OPS.add(OpSpec(
    name="lerp_w", family="binary", arity=3, accepts=lambda a: a.dtype in _FLOAT, pair=_lerp_pair,
    third=_lerp_third, params=lambda args: st.just({}),
    check=lambda args, p: None if _lerp_third(*args) else "lerp takes start, end and weight of one floating "
                                                          "dtype that broadcast",
    infer=lambda args, p, out: _fresh(args[0], out, shape=broadcast_shape(
        broadcast_shape(args[0].shape, args[1].shape), args[2].shape)),
    render=lambda n, p, i: f"torch.lerp({n[0]}, {n[1]}, {n[2]})",
    guards=lambda args, p: _all_syms(*args), operand=broadcast_operand, api="torch.lerp", dtypes=_FLOAT,
    doc="lerp(start, end, weight) with a tensor weight"))


# ---- a 0-d tensor built in the program, fed to a scan or a reduction, added to x ---------------------------

_MAKES = ("tensor", "full", "scalar_tensor")
_THEN = ("cumsum", "cumprod", "sum", "prod", "amax", "mean")
_CONSTS = {"float": (2.5, -1.5, 0.0), "int": (2, -3)}


def _built_dtype(p) -> str:
    """What torch makes of the constant: scalar_tensor is always the default float; the others follow c."""
    return "float32" if p["make"] == "scalar_tensor" or isinstance(p["c"], float) else "int64"


def _built_params(a):
    def draw(d):
        make = d(st.sampled_from(_MAKES))
        c = d(st.sampled_from(_CONSTS["float" if D.is_floating(a.dtype) else "int"]))
        thens = [t for t in _THEN if t != "mean" or make == "scalar_tensor" or isinstance(c, float)]
        return {"make": make, "c": c, "then": d(st.sampled_from(thens))}
    return drawn(draw)


def _built_check(a, p) -> str | None:
    if p.get("make") not in _MAKES or p.get("then") not in _THEN:
        return f"a built 0-d tensor is made by one of {_MAKES} and fed to one of {_THEN}"
    c = p.get("c")
    if type(c) not in (int, float) or c not in _CONSTS["float"] + _CONSTS["int"]:
        return f"a built 0-d tensor's constant c is one of {_CONSTS['float'] + _CONSTS['int']}"
    if p["then"] == "mean" and _built_dtype(p) != "float32":
        return "mean of an integer 0-d tensor: eager refuses it"
    return None


def _built_result(a, p) -> str:
    r = _built_dtype(p)
    if a.rank == 0:
        return D.promote(a.dtype, r)
    return a.dtype if D.category(r) <= D.category(a.dtype) else r  # a 0-d operand counts only by its category


def _built_render(x, p) -> str:
    shape = "(), " if p["make"] == "full" else ""
    built = f"torch.{p['make']}({shape}{py_literal(p['c'])}, device={x}.device)"
    fed = f"torch.{p['then']}({built}, 0)" if p["then"] in ("cumsum", "cumprod") else f"torch.{p['then']}({built})"
    return f"({x} + {fed})"


OPS.add(OpSpec(
    name="built_scan", family="scan", arity=1, accepts=lambda a: True,
    params=lambda args: _built_params(args[0]), check=lambda args, p: _built_check(args[0], p),
    infer=lambda args, p, out: _fresh(args[0], out, dtype=_built_result(args[0], p)),
    render=lambda n, p, i: _built_render(n[0], p), api="torch.tensor",
    doc="x + a scan or reduction of a 0-d tensor built in the program (torch.tensor, torch.full((), c), "
        "torch.scalar_tensor)"))


# ---- bool tensors in arithmetic with a number ------------------------------------------------------------

_BOOL_FNS = {"add": "+", "mul": "*", "sub": "-"}
_BOOL_SCALARS = (2.0, 2, -0.5, True)
# Forms eager refuses, with its message: drawn never; a program that holds one is refused here, and judging
# what eager and the compiler each do with it is the place to take it in (error parity).
EAGER_REJECTS = {"sub": "Subtraction, the `-` operator, with a bool tensor is not supported"}


def _bool_check(a, p) -> str | None:
    fn, s = p.get("fn"), p.get("s")
    if a.dtype != "bool":
        return "bool_scalar takes a bool tensor"
    if fn not in _BOOL_FNS or (type(s), s) not in {(type(v), v) for v in _BOOL_SCALARS}:
        return f"bool_scalar takes fn one of {tuple(_BOOL_FNS)} and s one of {_BOOL_SCALARS}"
    if fn in EAGER_REJECTS:
        return f"eager raises: {EAGER_REJECTS[fn]}"
    return None


OPS.add(OpSpec(
    name="bool_scalar", family="pointwise", arity=1, accepts=lambda a: a.dtype == "bool",
    params=lambda args: st.fixed_dictionaries({"fn": st.sampled_from([f for f in _BOOL_FNS if f not in EAGER_REJECTS]),
                                               "s": st.sampled_from(_BOOL_SCALARS)}),
    check=lambda args, p: _bool_check(args[0], p),
    infer=lambda args, p, out: _fresh(args[0], out, dtype=D.promote_scalar("bool", p["s"])),
    render=lambda n, p, i: f"({n[0]} {_BOOL_FNS[p['fn']]} {py_literal(p['s'])})", api="Tensor.add",
    dtypes=frozenset({"bool"}), doc="a bool tensor plus or times a number (promoted: 2.0 float, 2 int64, True bool)"))
