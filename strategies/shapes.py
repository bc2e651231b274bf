"""Sizes, size schedules, shapes and input tensors."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.ir import TensorInput

from ._validate import check_range

# Simplest first (sampled_from shrinks to the front): 1, then small sizes, then
# the 0/1 edges Dynamo specialises on, then sizes around vector widths/blocks.
SIZE_CHOICES = (1, 2, 3, 4, 5, 0, 7, 8, 9, 6, 15, 16, 17, 31, 33)
# float32 is drawn most and first; the others follow, the narrow integers last.
DTYPE_CHOICES = ("float32", "float16", "float32", "bfloat16", "float64", "int32", "int64", "bool", "float32",
                 "uint8", "int8", "int16")
RANK_CHOICES = (1, 2, 3, 0, 4, 5)
from fuzz.program.layouts import LAYOUTS, OFFSETS, STEPS  # noqa: E402 - the one table of layouts
SCALES = (1.0, 10.0, 0.01)
MAX_NUMEL = 1 << 15


def size_schedules(*, calls: int = 3, symbols: int = 1) -> st.SearchStrategy:
    """{"s0": [n0, n1, ...], ...}: `calls` sizes for each of `symbols` size
    symbols. Shrinks every size towards 1."""
    check_range("calls", calls, "calls", calls, floor=1)
    check_range("symbols", symbols, "symbols", symbols, floor=0)
    one = st.lists(st.sampled_from(SIZE_CHOICES), min_size=calls, max_size=calls)
    return st.fixed_dictionaries({f"s{i}": one for i in range(symbols)})


def shapes(sizes: dict, *, min_rank: int = 0, max_rank: int = 5, max_numel: int = MAX_NUMEL) -> st.SearchStrategy:
    """A shape over `sizes`: each dim a size symbol or a literal 1..4, the
    largest numel over the schedule at most `max_numel`. Shrinks towards rank 1
    and towards the first symbol."""
    check_range("min_rank", min_rank, "max_rank", max_rank)
    ranks = [r for r in RANK_CHOICES if min_rank <= r <= max_rank]

    return _shape(sizes, ranks, max_numel)


@st.composite
def _shape(draw_, sizes: dict, ranks: list, max_numel: int):
    rank = draw_(st.sampled_from(ranks))
    shape, numel = [], 1
    for _ in range(rank):
        opts = [s for s in sizes if numel * max(max(sizes[s]), 1) <= max_numel]
        opts += [n for n in (1, 2, 3, 4) if numel * n <= max_numel]
        d = draw_(st.sampled_from(opts))
        numel *= max(max(sizes[d]), 1) if isinstance(d, str) else d
        shape.append(d)
    return shape


def tensor_inputs(sizes: dict, *, name: str = "x0", dtypes=D.ALL, min_rank: int = 0, max_rank: int = 5,
                  layouts=LAYOUTS) -> st.SearchStrategy:
    """A TensorInput (no markings yet). Shrinks towards float32, contiguous,
    rank 1, unit scale."""
    dts = [d for d in DTYPE_CHOICES if d in dtypes]
    if not dts:
        from hypothesis.errors import InvalidArgument
        raise InvalidArgument(f"dtypes={dtypes!r} has none of {D.ALL}")

    return _tensor_input(sizes, name, dts, min_rank, max_rank, layouts)


@st.composite
def _tensor_input(draw_, sizes, name, dts, min_rank, max_rank, layouts):
    shape = draw_(shapes(sizes, min_rank=min_rank, max_rank=max_rank))
    return draw_(input_like(name, shape, draw_(st.sampled_from(dts)), layouts=layouts))


def layouts(shape: list, allowed=LAYOUTS) -> st.SearchStrategy:
    """The layout fields of an input of this shape ({"layout": ...} and the
    fields that layout reads), one of `allowed` (which must hold contiguous).
    Shrinks towards contiguous, then the layouts in LAYOUTS order."""
    rank = len(shape)
    fits = {"contiguous": True, "transposed": rank >= 2, "offset": True, "expanded": rank >= 1,
            "channels_last": rank in (4, 5), "permuted": rank >= 2, "strided": rank >= 1, "overlapping": rank >= 1}

    return _layout_fields(rank, [name for name in LAYOUTS if fits[name] and name in allowed])


# Module-level composites taking arguments: a composite decorated inside a function is decorated again
# on every call, and Hypothesis then reads and tokenizes its source each time (40% of drawing time).
@st.composite
def _layout_fields(draw_, rank: int, choices: list):
    layout = draw_(st.sampled_from(choices))
    f = {"layout": layout}
    if layout in ("expanded", "strided"):
        f["layout_dim"] = draw_(st.integers(0, rank - 1))
    if layout == "offset":
        f["offset"] = draw_(st.sampled_from(OFFSETS))
    if layout == "strided":
        f["step"] = draw_(st.sampled_from(STEPS))
    if layout == "permuted":
        f["perm"] = draw_(st.permutations(list(range(rank))))
    return f


def input_like(name: str, shape: list, dtype: str, layouts=LAYOUTS) -> st.SearchStrategy:
    """A TensorInput of a given shape and dtype; its layout (one of `layouts`) and scale drawn."""
    return _input_like(name, shape, dtype, layouts)


@st.composite
def _input_like(draw_, name, shape, dtype, allowed):
    return TensorInput(name=name, shape=list(shape), dtype=dtype, **draw_(_layouts(shape, allowed)),
                       scale=draw_(st.sampled_from(SCALES)))


_layouts = layouts  # input_like's parameter of the same name hides it


def numel(shape, sizes, call: int) -> int:
    return math.prod(d if isinstance(d, int) else sizes[d][call] for d in shape)
