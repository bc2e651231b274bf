"""Matrix products: mm, bmm, matmul (broadcasting), addmm, linear, baddbmm.

Each comes two ways: over values of the program whose contracted dims match
by key (a padded or sliced tensor times another), and against a weight made
in the program whose in-dim is the operand's own symbolic size (always
applicable, so matrix consumers of pads and views are common). Floating
dtypes, and for mm, bmm and matmul integer ones too as ops of their own
(mm_int, ...): eager multiplies integers on CPU only, so those are drawn and
accepted only in CPU programs (OpSpec.devices).
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import OPS, _all_syms, _fresh
from fuzz.program.ops.common_gen import dim_text, weight
from fuzz.program.symbolic import Dim, broadcast_shape, broadcastable, broadcasts_to

_FLOAT = frozenset(D.FLOATING)
_INT = frozenset(D.INTEGRAL)
_OUT_SIZES = (3, 1, 4, 8)  # literal out-features of a made weight; 1 makes a degenerate product


def _float(a) -> bool:
    return a.dtype in _FLOAT


def _same(a, b) -> bool:
    return b.dtype == a.dtype  # mm and friends do not promote


def _lit(n, calls) -> Dim:
    return Dim.literal(n, calls)


def _product_shape(a, b):
    """matmul's result shape for ranks >= 1, or None when they do not fit."""
    if a.rank == 0 or b.rank == 0:
        return None
    k_b = b.shape[0] if b.rank == 1 else b.shape[-2]
    if a.shape[-1].key != k_b.key:
        return None
    if a.rank == 1 and b.rank == 1:
        return ()
    if b.rank == 1:
        return tuple(a.shape[:-1])
    if a.rank == 1:
        return tuple(b.shape[:-2]) + (b.shape[-1],)
    ba, bb = a.shape[:-2], b.shape[:-2]
    if not broadcastable(ba, bb):
        return None
    return tuple(broadcast_shape(ba, bb)) + (a.shape[-2], b.shape[-1])


def _fresh_b(name):
    """The shape of a fresh right operand for a: its contracted dim, then 3 columns."""
    def shape(chosen):
        a = chosen[0]
        three = _lit(3, a.calls)
        if name.startswith("bmm"):
            return (a.shape[0], a.shape[2], three)
        return (a.shape[-1],) if a.rank == 1 else (a.shape[-1], three)
    return shape


def _product(name, api, rank_a, rank_b, render, doc, dtypes=_FLOAT, devices=()):
    """a @ b over two program values (rank_* None: any rank >= 1)."""
    def ok_a(a):
        return a.dtype in dtypes and (a.rank == rank_a if rank_a else 1 <= a.rank <= 4)

    def pair(a, b):
        if not (_same(a, b) and (b.rank == rank_b if rank_b else b.rank >= 1)):
            return False
        shape = _product_shape(a, b)
        if shape is None:
            return False
        return not name.startswith("bmm") or a.shape[0].key == b.shape[0].key

    return OPS.add(OpSpec(
        name=name, family="matrix", arity=2, accepts=ok_a, pair=pair,
        params=lambda args: st.just({}),
        check=lambda args, p: None if ok_a(args[0]) and pair(*args) else f"{name}: operands do not multiply",
        infer=lambda args, p, out: _fresh(args[0], out, shape=_product_shape(*args)),
        render=lambda n, p, i: render.format(a=n[0], b=n[1]),
        guards=lambda args, p: _all_syms(*args), operand=_fresh_b(name), api=api, doc=doc,
        dtypes=frozenset(dtypes), devices=devices, grad=dtypes == _FLOAT))


_product("mm", "torch.mm", 2, 2, "torch.mm({a}, {b})", "mm of two values whose inner dims match")
_product("bmm", "torch.bmm", 3, 3, "torch.bmm({a}, {b})", "bmm of two batches")
_product("matmul", "torch.matmul", None, None, "torch.matmul({a}, {b})", "matmul with broadcast batch dims")
# integer products: eager has CPU kernels only (CUDA's raise "not implemented for 'Int'")
_product("mm_int", "torch.mm", 2, 2, "torch.mm({a}, {b})", "integer mm (CPU)", _INT, ("cpu",))
_product("bmm_int", "torch.bmm", 3, 3, "torch.bmm({a}, {b})", "integer bmm (CPU)", _INT, ("cpu",))
_product("matmul_int", "torch.matmul", None, None, "torch.matmul({a}, {b})", "integer matmul (CPU)", _INT, ("cpu",))


def _addmm_third(a, b, c):
    return _same(a, c) and c.rank <= 2 and broadcasts_to(c.shape, (a.shape[0], b.shape[1]))


OPS.add(OpSpec(
    name="addmm", family="matrix", arity=3,
    accepts=lambda a: _float(a) and a.rank == 2,
    pair=lambda a, b: _same(a, b) and b.rank == 2 and a.shape[1].key == b.shape[0].key,
    third=_addmm_third,
    params=lambda args: st.sampled_from([(1, 1), (0.5, 2)]).map(lambda t: {"beta": t[0], "alpha": t[1]}),
    check=lambda args, p: None if _addmm_third(*args) else "addmm: the bias does not broadcast to the product",
    infer=lambda args, p, out: _fresh(args[0], out, shape=(args[0].shape[0], args[1].shape[1])),
    render=lambda n, p, i: f"torch.addmm({n[2]}, {n[0]}, {n[1]}"
                           + (")" if p["beta"] == 1 and p["alpha"] == 1 else f", beta={p['beta']}, alpha={p['alpha']})"),
    guards=lambda args, p: _all_syms(*args), api="torch.addmm", doc="bias + a @ b, bias broadcast",
    operand=lambda ch: (ch[0].shape[1], _lit(3, ch[0].calls)) if len(ch) == 1 else (ch[1].shape[1],)))


def _baddbmm_third(a, b, c):
    return _same(a, c) and c.rank <= 3 and broadcasts_to(c.shape, (a.shape[0], a.shape[1], b.shape[2]))


OPS.add(OpSpec(
    name="baddbmm", family="matrix", arity=3,
    accepts=lambda a: _float(a) and a.rank == 3,
    pair=lambda a, b: (_same(a, b) and b.rank == 3 and a.shape[0].key == b.shape[0].key
                       and a.shape[2].key == b.shape[1].key),
    third=_baddbmm_third,
    params=lambda args: st.just({}),
    check=lambda args, p: None if _baddbmm_third(*args) else "baddbmm: the bias does not broadcast to the product",
    infer=lambda args, p, out: _fresh(args[0], out, shape=(args[0].shape[0], args[0].shape[1], args[1].shape[2])),
    render=lambda n, p, i: f"torch.baddbmm({n[2]}, {n[0]}, {n[1]})",
    guards=lambda args, p: _all_syms(*args), api="torch.baddbmm", doc="bias + batched a @ b",
    operand=lambda ch: (ch[0].shape[0], ch[0].shape[2], _lit(3, ch[0].calls)) if len(ch) == 1 else (ch[1].shape[2],)))


# ---- against a weight made in the program ---------------------------------------

def _with_weight(name, api, min_rank, max_rank, render, out_shape, doc):
    """`render(x, w_text, p, a)`: x times a made weight of in-dim x.shape[-1]."""
    def params(args):
        return st.fixed_dictionaries({"n": st.sampled_from(_OUT_SIZES), "bias": st.booleans()})

    def check(args, p):
        a = args[0]
        if not (_float(a) and min_rank <= a.rank <= max_rank):
            return f"{name} takes a floating tensor of rank {min_rank}..{max_rank}"
        if not isinstance(p.get("n"), int) or p["n"] < 1:
            return f"{name}: out size must be a positive int"
        return None

    return OPS.add(OpSpec(
        name=name, family="matrix", arity=1, accepts=lambda a: _float(a) and min_rank <= a.rank <= max_rank,
        params=params, check=check,
        infer=lambda args, p, out: _fresh(args[0], out, shape=out_shape(args[0], _lit(p["n"], args[0].calls))),
        render=lambda n, p, i: render(n[0], p, i[0]), api=api, doc=doc))


def _w(x, rows, cols, salt=0):
    return weight([rows, cols], x, salt)


_with_weight("linear_w", "F.linear", 1, 4,
             lambda x, p, a: f"F.linear({x}, {_w(x, str(p['n']), dim_text(x, -1))}"
                             + (f", {weight([str(p['n'])], x, 1)})" if p["bias"] else ")"),
             lambda a, n: tuple(a.shape[:-1]) + (n,), "F.linear against a made weight (and bias)")
_with_weight("mm_w", "torch.mm", 2, 2,
             lambda x, p, a: (f"torch.addmm({weight([str(p['n'])], x, 1)}, {x}, {_w(x, dim_text(x, -1), str(p['n']))})"
                              if p["bias"] else f"torch.mm({x}, {_w(x, dim_text(x, -1), str(p['n']))})"),
             lambda a, n: (a.shape[0], n), "mm (or addmm) against a made weight")
_with_weight("matmul_w", "torch.matmul", 1, 4,
             lambda x, p, a: f"torch.matmul({x}, {_w(x, dim_text(x, -1), str(p['n']))})",
             lambda a, n: tuple(a.shape[:-1]) + (n,), "matmul against a made weight")
_with_weight("bmm_w", "torch.bmm", 3, 3,
             lambda x, p, a: (f"torch.baddbmm({weight(['1', '1', str(p['n'])], x, 1)}, {x}, "
                              f"{weight([dim_text(x, 0), dim_text(x, 2), str(p['n'])], x)})" if p["bias"] else
                              f"torch.bmm({x}, {weight([dim_text(x, 0), dim_text(x, 2), str(p['n'])], x)})"),
             lambda a, n: (a.shape[0], a.shape[1], n), "bmm (or baddbmm) against a made batch of weights")


def _gram_shape(a):
    return tuple(a.shape[:-1]) + (a.shape[-2],)


OPS.add(OpSpec(
    name="gram", family="matrix", arity=1, accepts=lambda a: _float(a) and 2 <= a.rank <= 4,
    params=lambda args: st.just({}),
    check=lambda args, p: None if _float(args[0]) and 2 <= args[0].rank <= 4 else "gram takes a floating matrix",
    infer=lambda args, p, out: _fresh(args[0], out, shape=_gram_shape(args[0])),
    render=lambda n, p, i: f"({n[0]} @ {n[0]}.transpose(-1, -2))", api="torch.matmul",
    doc="x @ x.mT: a product whose both operands carry x's symbolic dims"))
