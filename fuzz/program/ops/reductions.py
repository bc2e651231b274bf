"""Reductions over one dim, several or all, keepdim both ways."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import (OpSpec, calls)
from fuzz.program.ops.common import OPS
from fuzz.program.ops.common import (_ANY, _FLOAT, _dim_in, _fresh, dtype_check, dtype_kw, with_dtype)
from fuzz.program.symbolic import Dim, norm_dim

# ---- reductions ----------------------------------------------------------------

def reduction(name, fn, dtypes, result, multi_dim=True, nonempty=False, allow_all=True, extra=None, api="",
              decides=(), dtyped=None):
    """`extra`: (strategy of more params, render of them as keyword text) for var/std's correction;
    `decides`: OpSpec.decides; `dtyped`: it takes dtype= (False: any dtype_targets, True: floating ones only)."""
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
        if len(ok) == a.rank and allow_all:
            options.append(st.none())
        if multi_dim and len(ok) >= 2:
            options.append(st.lists(st.sampled_from(ok), min_size=2, max_size=len(ok), unique=True).map(sorted))
        base = {"dim": st.one_of(options), "keepdim": st.booleans()}
        if extra:
            base.update(extra[0])
        return st.fixed_dictionaries(base) if dtyped is None else with_dtype(st.fixed_dictionaries(base), a, dtyped)

    def check(args, p):
        a = args[0]
        if a.dtype not in dtypes:
            return f"{name} does not take {a.dtype}"
        d = p.get("dim")
        if d is None and not allow_all:
            return f"{name} needs a dim"
        ds = d if isinstance(d, list) else ([] if d is None else [d])
        if not all(_dim_in(a, x) for x in ds):
            return f"{name} dim {d!r} out of range for rank {a.rank}"
        if isinstance(d, list) and (not multi_dim or not d or len(set(norm_dim(x, a.rank) for x in d)) != len(d)):
            return f"{name} takes {'one dim' if not multi_dim else 'distinct dims'}"
        if nonempty and any(a.shape[i].min == 0 for i in dims_of(a, p)):
            return f"{name} over a dim that is empty at some call"
        return dtype_check(a, p, dtyped) if dtyped is not None else None

    def infer(args, p, out):
        a = args[0]
        red = set(dims_of(a, p))
        if p.get("dim") is None:
            shape = []
        elif p.get("keepdim"):
            shape = [Dim.literal(1, calls(a)) if i in red else d for i, d in enumerate(a.shape)]
        else:
            shape = [d for i, d in enumerate(a.shape) if i not in red]
        return _fresh(a, out, shape=tuple(shape), dtype=p.get("dtype") or result(a.dtype))

    def render(n, p, infos):
        d = p.get("dim")
        more = (extra[1](p) if extra else "") + dtype_kw(p)
        if d is None:
            return f"{fn}({n[0]}{more})"
        dim = f"({', '.join(map(str, d))})" if isinstance(d, list) else str(d)
        return f"{fn}({n[0]}, dim={dim}" + (", keepdim=True" if p.get("keepdim") else "") + more + ")"

    return OPS.add(OpSpec(
        name=name, family="reduction", arity=1,
        accepts=lambda a: a.dtype in dtypes and (not nonempty or any(d.min > 0 for d in a.shape) or a.rank == 0)
        and (allow_all or a.rank > 0),
        params=params,
        check=check, infer=infer, render=render,
        api=api or fn, dtypes=frozenset(dtypes), doc=f"{fn} over one dim, several or all; keepdim both ways",
        decides=decides,
    ))


reduction("sum", "torch.sum", _ANY, D.sum_result, dtyped=False)
reduction("mean", "torch.mean", _FLOAT, lambda dt: dt, dtyped=True)
reduction("amax", "torch.amax", _ANY, lambda dt: dt, nonempty=True)
reduction("amin", "torch.amin", _ANY, lambda dt: dt, nonempty=True)
reduction("prod", "torch.prod", _ANY, D.sum_result, multi_dim=False, dtyped=False)



_any_all = lambda dt: "uint8" if dt == "uint8" else "bool"  # noqa: E731 - eager keeps uint8 (legacy), others give bool
_to_long = lambda dt: "int64"  # noqa: E731
_CORRECTION = ({"correction": st.sampled_from([1, 0])}, lambda p: f", correction={p['correction']}")

reduction("any", "torch.any", _ANY, _any_all, decides=(0,))
reduction("all", "torch.all", _ANY, _any_all, decides=(0,))
reduction("argmax", "torch.argmax", _ANY - {"bool"}, _to_long, multi_dim=False, nonempty=True, decides=(0,))
reduction("argmin", "torch.argmin", _ANY - {"bool"}, _to_long, multi_dim=False, nonempty=True, decides=(0,))
reduction("var", "torch.var", _FLOAT, lambda dt: dt, extra=_CORRECTION)
reduction("std", "torch.std", _FLOAT, lambda dt: dt, extra=_CORRECTION)
reduction("logsumexp", "torch.logsumexp", _FLOAT, lambda dt: dt, allow_all=False)


def _count_nonzero_params(args):
    a = args[0]
    return st.one_of(st.none(), st.integers(-a.rank, -1) if a.rank else st.none()).map(lambda d: {"dim": d})


OPS.add(OpSpec(
    name="count_nonzero", family="reduction", arity=1, accepts=lambda a: True,
    params=_count_nonzero_params,
    check=lambda args, p: None if p.get("dim") is None or _dim_in(args[0], p["dim"]) else "count_nonzero: bad dim",
    infer=lambda args, p, out: _fresh(args[0], out, dtype="int64", shape=() if p["dim"] is None else tuple(
        d for i, d in enumerate(args[0].shape) if i != norm_dim(p["dim"], args[0].rank))),
    render=lambda n, p, i: f"torch.count_nonzero({n[0]})" if p["dim"] is None
    else f"torch.count_nonzero({n[0]}, dim={p['dim']})",
    api="torch.count_nonzero", doc="count_nonzero over all or one dim", decides=(0,)))
