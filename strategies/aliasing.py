"""Inputs that alias another input: a view of it (the same tensor, x[...], a transpose, a narrow window,
or elements just before an offset input), at times aliased at some calls only. Dynamo must treat such
inputs as sharing storage, and in-place writes through one must show through the other."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program.ir import TensorInput
from fuzz.program.layouts import view_shape


# How often a program gets an input aliasing another: never first (shrinks away).
_ALIAS = (False, False, True)


def aliases(inputs: list, sizes: dict, calls: int, *, name: str) -> st.SearchStrategy:
    """None, or an input that is a view of one of `inputs` (same storage):
    the same tensor, x[...], a transpose, a narrow window, or elements just
    before an offset input; its aliasing at times switched off for some calls.
    Shrinks towards None, then the simplest view ("same"), aliased at every call."""
    return _alias(inputs, sizes, calls, name)


@st.composite  # at module level: one decorated inside aliases was decorated again at every call
def _alias(d, inputs: list, sizes: dict, calls: int, name: str):
    if not d(st.sampled_from(_ALIAS)):
        return None
    base = d(st.sampled_from(inputs))
    options = [{"view": "same"}, {"view": "view"}]
    if len(base.shape) >= 2:
        options.append({"view": "transpose"})
    for dim, n in enumerate(base.shape):
        low = min(sizes[n]) if isinstance(n, str) else n
        if low >= 2:
            options.append({"view": "narrow", "dim": dim, "start": 1, "length": min(low - 1, 2)})
    if base.layout == "offset":
        options.append({"view": "before", "length": base.offset})
    alias = {"of": base.name, **d(st.sampled_from(options))}
    per_call = d(st.sampled_from([None, None, "alternate"]))
    if per_call:
        alias["calls"] = [i % 2 == 0 for i in range(calls)]
        # At times the first flip comes at unchanged sizes (call 1 repeats call 0's): the aliasing alone
        # changes, with no recompile for new sizes beside it (False first: shrinks away). The
        # sizes only lose a value, so what the inputs were drawn to fit still holds.
        if d(st.sampled_from((False, True))):
            for values in sizes.values():
                values[1] = values[0]
    return TensorInput(name=name, shape=view_shape(alias, base), dtype=base.dtype, alias=alias)
