"""Dynamic-dim markings."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program.ir import MARKS


def has_mark_unbacked() -> bool:
    """Whether the installed torch has mark_unbacked (imported lazily: drawing
    must work without torch)."""
    try:
        import torch._dynamo.decorators as dec
    except Exception:
        return False
    return hasattr(dec, "mark_unbacked")


def symbol_marks(symbols, *, guarded=frozenset(), allow_unbacked: bool | None = None,
                 marks=MARKS) -> st.SearchStrategy:
    """{symbol: mark}: one mark per size symbol, applied to every dim of that
    symbol in every input, as a user marks a batch dim on all inputs (marking
    one input's s0 dynamic and another's not makes broadcasting specialise it).
    `unbacked` only for symbols no op guards on; only `marks` (which must
    hold "static"). Shrinks towards "static"."""
    if allow_unbacked is None:
        allow_unbacked = has_mark_unbacked()

    def options(s):
        opts = [m for m in ("static", "dynamic", "maybe_dynamic") if m in marks]
        if allow_unbacked and s not in guarded and "unbacked" in marks:
            opts.append("unbacked")
        assert set(opts) <= set(MARKS)
        return st.sampled_from(opts)

    return st.fixed_dictionaries({s: options(s) for s in symbols})


def dynamic_markings(shape, *, guarded=frozenset(), allow_unbacked: bool | None = None,
                     by_symbol: dict | None = None, marks=MARKS) -> st.SearchStrategy:
    """One mark per dim of `shape` (ints or size symbols). Shrinks towards
    "static". Literal dims are only ever static or maybe_dynamic: a literal
    size never varies, and broadcasting, expand or a bounded slice pins it, so
    asserting dynamism would only buy a ConstraintViolation. Symbol dims take
    their mark from `by_symbol` when given, else draw one (see symbol_marks)."""
    syms = sorted({d for d in shape if isinstance(d, str)} - set(by_symbol or {}))
    own = symbol_marks(syms, guarded=guarded, allow_unbacked=allow_unbacked, marks=marks)
    literal = [m for m in ("static", "maybe_dynamic") if m in marks]

    def per_dim(sym_marks):
        by = {**sym_marks, **(by_symbol or {})}
        return st.tuples(*(st.just(by[d]) if isinstance(d, str) else st.sampled_from(literal)
                           for d in shape)).map(list)

    return own.flatmap(per_dim)


def mark_styles(x, sizes: dict) -> st.SearchStrategy:
    """(mark_negative, mark_range) for input x, its marks drawn: dims named
    from the end at times, and for mark_dynamic dims at times a [min, max]
    that holds every size of the schedule (a range the program honours).
    Shrinks towards (False, {})."""
    dims = [d for d, m in enumerate(x.marks) if m == "dynamic" and isinstance(x.shape[d], str)]
    return _mark_style(x, sizes, dims)


@st.composite  # at module level: one decorated inside mark_styles was decorated again at every call
def _mark_style(d, x, sizes: dict, dims: list):
    negative = d(st.sampled_from((False, False, True))) if x.marks and any(m != "static" for m in x.marks) \
        else False
    ranges = {}
    for dim in dims:
        if d(st.sampled_from((False, False, True))):
            vals = sizes[x.shape[dim]]
            ranges[str(dim)] = [max(min(vals), 2) if min(vals) >= 2 else 0, max(vals) + d(st.sampled_from((0, 64)))]
    return negative, ranges
