"""Strategies for single ops' parameters, for users' own tests."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from fuzz.program.opdb import OPS, PAD_MODES
from fuzz.program.symbolic import Dim, ValueInfo


def pad_specs(shape, *, dtype: str = "float32", modes=PAD_MODES) -> st.SearchStrategy:
    """F.pad arguments {"mode", "pad", "value"?} valid for a tensor of the
    concrete `shape`. Shrinks towards constant mode, one dim, zero widths."""
    bad = set(modes) - set(PAD_MODES)
    if bad:
        raise InvalidArgument(f"unknown pad modes {sorted(bad)}; choose from {PAD_MODES}")
    info = ValueInfo(shape=tuple(Dim.literal(int(n), 1) for n in shape), dtype=dtype, root="x", calls=1)
    spec = OPS["pad"]
    if not spec.accepts(info):
        raise InvalidArgument(f"no pad is valid for a {dtype} tensor of shape {tuple(shape)}")
    return spec.params([info]).filter(lambda p: p["mode"] in modes)
