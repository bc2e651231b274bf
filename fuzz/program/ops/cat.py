"""cat of two tensors that agree outside one dim."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import (OpSpec)
from fuzz.program.ops.common import OPS
from fuzz.program.ops.common import (_all_syms, _dim_in, _fresh)
from fuzz.program.symbolic import ValueInfo, norm_dim

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
    render=lambda n, p, i: f"torch.cat([{n[0]}, {n[1]}], dim={p['dim']})", api="torch.cat",
    guards=lambda args, p: _all_syms(*args), operand=lambda chosen: chosen[0].shape,
    doc="cat of two tensors equal outside one dim (often a tensor and its padded or sliced self)",
))


