"""Reductions over one dim, several or all, keepdim both ways."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import (OpSpec, calls)
from fuzz.program.ops.common import OPS
from fuzz.program.ops.common import (_ANY, _FLOAT, _dim_in, _fresh)
from fuzz.program.symbolic import Dim, norm_dim

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


