"""What every op family shares: the registry they add to, dtype sets, result
constructors and small param strategies."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import Registry
from fuzz.program.symbolic import ValueInfo

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
                     overlapping=kw.get("overlapping", info.overlapping), is_input=False, bits_fixed=info.bits_fixed)


def _syms(*dims) -> set:
    out = set()
    for d in dims:
        out |= set(d.syms)
    return out


def _all_syms(*infos) -> set:
    return _syms(*(d for i in infos for d in i.shape))


def _none(*_):
    return None


def _dim_in(a, d):
    return isinstance(d, int) and not isinstance(d, bool) and -a.rank <= d < a.rank


_SLICE_BOUNDS = [None, 1, -1, 2, 0, -2, 3]


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



_SCALARS_FLOAT = [1.0, 2.5, -0.5, 0.0, 1e4, float("inf")]
_SCALARS_INT = [1, 2, -3, 0]


def _scalar_for(dt: str):
    return st.sampled_from(_SCALARS_FLOAT if D.is_floating(dt) else _SCALARS_INT)




def dtype_targets(dt: str, floats_only: bool = False) -> list:
    """The dtype= a scan or reduction of a dt value may be given: one that widens it (a float never to an
    integer, whose casts of NaN/inf are undefined); `floats_only`: floating targets only (mean, softmax)."""
    if D.is_floating(dt):
        return ["float64"] + (["float32"] if dt != "float64" else [])
    return ["float32", "float64"] + ([] if floats_only else ["int64"])


def with_dtype(params: st.SearchStrategy, a: ValueInfo, floats_only: bool = False) -> st.SearchStrategy:
    """params, with a dtype= param in one draw of three (dtype_targets; absent otherwise)."""
    pick = st.sampled_from([None, None] + dtype_targets(a.dtype, floats_only))
    return st.tuples(params, pick).map(lambda t: t[0] if t[1] is None else {**t[0], "dtype": t[1]})


def dtype_check(a: ValueInfo, p, floats_only: bool = False) -> str | None:
    """Why a dtype= param is bad, or None (absent is the op's own dtype)."""
    if "dtype" not in p:
        return None
    if p["dtype"] not in dtype_targets(a.dtype, floats_only):
        return f"dtype={p['dtype']!r} of a {a.dtype} value: one of {dtype_targets(a.dtype, floats_only)}"
    return None


def dtype_kw(p) -> str:
    """The dtype= keyword text, or "" without one."""
    return f", dtype=torch.{p['dtype']}" if "dtype" in p else ""


def drawn(fn) -> st.SearchStrategy:
    """The strategy that calls fn(draw), for a drawing function made per call (a closure over the
    value an op takes): what st.composite makes of it, label and all (so the stream is the same),
    without st.composite's read of fn's source at every call (a third of a reflect-pad shrink's draws)."""
    try:
        from hypothesis.strategies._internal.core import CompositeStrategy
    except ImportError:  # a Hypothesis without it: the public way
        return st.composite(fn)()
    return CompositeStrategy(fn, (), {})
