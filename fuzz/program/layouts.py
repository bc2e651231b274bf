"""How a program input is laid out in memory, and inputs that alias others.

One table for both: what each layout or view needs (a reason when it does
not fit), whether the result overlaps itself, and the Python that makes it
(codegen's make_inputs). The strategies draw from the same tables, the
shrinker simplifies towards "contiguous" and no alias.

Layouts (TensorInput.layout):
  contiguous     make(shape)
  transposed     the last two dims swapped in storage
  offset         a storage offset of `offset` elements (alignments 1..16)
  expanded       dim `layout_dim` has stride 0
  channels_last  rank 4 or 5, channels-last memory format
  permuted       storage in the order `perm` (any permutation)
  strided        every `step`-th element along `layout_dim` (x[::2])
  overlapping    as_strided with every stride 1: elements shared by many indices

Aliasing inputs: TensorInput.alias = {"of": an earlier input, "view": how,
...} makes the input a view of that input's storage instead of its own:
  same       the very same tensor, passed twice
  view       x[...]: another tensor object on the same elements
  transpose  x.transpose(-1, -2)
  narrow     x.narrow(dim, start, length): a literal window overlapping x
  before     `length` elements of x's storage just before x (x has an offset
             layout): the same storage, elements disjoint from x's
and "calls" (one bool per call, or absent: always) makes the aliasing change
from one call to the next: where false the input is a copy of that view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

LAYOUTS = ("contiguous", "transposed", "offset", "expanded", "channels_last", "permuted", "strided", "overlapping")
VIEWS = ("same", "view", "transpose", "narrow", "before")
OFFSETS = (3, 1, 4, 8, 16)  # storage offsets drawn: 3 first (the old fixed one), then alignments
STEPS = (2, 3)


@dataclass(frozen=True)
class Layout:
    name: str
    needs: Callable  # (TensorInput) -> reason it does not fit, or None
    overlapping: bool
    make: Callable  # (shape texts, make-args text, TensorInput) -> expression
    # (concrete dims, TensorInput) -> elements of the storage behind the input, which a view may far exceed
    # (x[::64] of a tensor has 64 times its elements): the resource limit counts these
    storage: Callable = None

    def storage_elements(self, dims, x) -> int:
        return (self.storage or _product)(list(dims), x)


def _product(dims, x=None) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _strided_storage(dims, x) -> int:
    return _product(dims) * x.step if dims else 1


def _expanded_storage(dims, x) -> int:
    return _product(dims[:x.layout_dim] + [1] + dims[x.layout_dim + 1:])


def _dims(shape) -> str:
    items = [str(d) for d in shape]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _numel(shape) -> str:
    return " * ".join(str(d) for d in shape) or "1"


def _rank(lo, hi=None):
    return lambda x: None if lo <= len(x.shape) <= (hi or 99) else f"needs rank {lo}" + (f"..{hi}" if hi else "+")


def _dim_ok(x):
    return None if 0 <= x.layout_dim < len(x.shape) else f"layout_dim {x.layout_dim} out of range"


def _permuted(shape, args, x):
    perm = list(x.perm)
    inverse = [perm.index(i) for i in range(len(perm))]
    return f"make({_dims([shape[i] for i in perm])}, {args}).permute({', '.join(map(str, inverse))})"


def _strided(shape, args, x):
    base = list(shape)
    base[x.layout_dim] = f"{x.step} * {shape[x.layout_dim]}" if isinstance(shape[x.layout_dim], str) \
        else x.step * shape[x.layout_dim]
    index = ", ".join(["::%d" % x.step if i == x.layout_dim else ":" for i in range(len(shape))])
    return f"make({_dims(base)}, {args})[{index}]"


def _expanded(shape, args, x):
    base = list(shape)
    base[x.layout_dim] = 1
    return f"make({_dims(base)}, {args}).expand({_dims(shape)})"


def _channels_last(shape, args, x):
    fmt = "channels_last" if len(shape) == 4 else "channels_last_3d"
    return f"make({_dims(shape)}, {args}).contiguous(memory_format=torch.{fmt})"


def _overlapping(shape, args, x):
    # every stride 1: element (i, j, ...) is storage[i + j + ...]
    numel = f"1 + sum(max(n - 1, 0) for n in {_dims(shape)})" if shape else "1"
    return f"make(({numel},), {args}).as_strided({_dims(shape)}, {_dims([1] * len(shape))})"


def _perm_ok(x):
    return None if sorted(x.perm) == list(range(len(x.shape))) else "perm must be a permutation of the dims"


LAYOUT_TABLE = {lay.name: lay for lay in (
    Layout("contiguous", lambda x: None, False, lambda s, a, x: f"make({_dims(s)}, {a})"),
    Layout("transposed", _rank(2), False,
           lambda s, a, x: f"make({_dims(list(s[:-2]) + [s[-1], s[-2]])}, {a}).transpose(-1, -2)"),
    Layout("offset", lambda x: None if x.offset >= 1 else "offset must be >= 1", False,
           lambda s, a, x: f"make(({x.offset} + {_numel(s)},), {a})[{x.offset}:].view({_dims(s)})",
           lambda dims, x: x.offset + _product(dims)),
    Layout("expanded", lambda x: _rank(1)(x) or _dim_ok(x), True, _expanded, _expanded_storage),
    Layout("channels_last", _rank(4, 5), False, _channels_last),
    Layout("permuted", lambda x: _rank(2)(x) or _perm_ok(x), False, _permuted),
    Layout("strided", lambda x: _rank(1)(x) or _dim_ok(x) or (None if x.step >= 2 else "step must be >= 2"),
           False, _strided, _strided_storage),
    Layout("overlapping", _rank(1), True, _overlapping, lambda dims, x: 1 + sum(max(n - 1, 0) for n in dims)),
)}


# -- aliasing inputs ------------------------------------------------------------------

def view_shape(alias: dict, base) -> list | None:
    """The shape (symbols and ints) of the view `alias` describes of input
    `base`, or None when that view does not fit it."""
    s, view = list(base.shape), alias.get("view")
    if view in ("same", "view"):
        return s
    if view == "transpose":
        return s[:-2] + [s[-1], s[-2]] if len(s) >= 2 else None
    n = alias.get("length")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return None
    if view == "narrow":
        d = alias.get("dim")
        return s[:d] + [n] + s[d + 1:] if isinstance(d, int) and 0 <= d < len(s) else None
    if view == "before":
        return [n] if base.layout == "offset" and n <= base.offset else None
    return None


def window_fits(alias: dict, dim_min: int) -> bool:
    """A narrow view's window lies inside its dim at every call (dim_min: the dim's smallest size)."""
    return alias.get("view") != "narrow" or 0 <= alias.get("start", -1) and alias["start"] + alias["length"] <= dim_min


def input_expr(x, shape, args: str) -> str:
    """The expression making input x (shape: its dims as Python text)."""
    return LAYOUT_TABLE[x.layout].make(shape, args, x)


def alias_lines(x) -> list[str]:
    """make_inputs lines for an aliasing input (indented for the function body)."""
    a, b = x.alias, x.alias["of"]
    expr = {"same": b, "view": f"{b}[...]", "transpose": f"{b}.transpose(-1, -2)",
            "narrow": f"{b}.narrow({a.get('dim')!r}, {a.get('start')!r}, {a.get('length')!r})",
            "before": f"torch.as_strided({b}, ({a.get('length')!r},), (1,), {b}.storage_offset() - {a.get('length')!r})",
            }[a["view"]]
    lines = [f"    {x.name} = {expr}"]
    if a.get("calls") is not None:
        lines.append(f"    if not {[bool(c) for c in a['calls']]!r}[call]:  # this call: a copy, not an alias")
        lines.append(f"        {x.name} = {x.name}.clone()")
    return lines
