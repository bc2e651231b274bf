"""Abstract values: what the generator and validator know about a tensor
without running torch.

A Dim carries its concrete size at every call of the size schedule plus a
symbolic key. Broadcasting and `cat` match dims by key, not by value, so a
program never forces a dynamic size to equal a constant (which would make
Dynamo specialise it); constraints (pad < size, ...) are checked against the
values at every call, so the program is valid for the whole schedule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# A data-dependent size's key starts a token: u_v3 (a lower bound), ux_v3 (exact); menu_1 is neither.
_BOUND_ONLY, _EXACT = re.compile(r"\bu_"), re.compile(r"\bux_")


@dataclass(frozen=True)
class Dim:
    base: str | None  # opaque symbolic part ("s0", "s0//2+s1"), None for literals
    const: int  # affine offset added to base
    values: tuple[int, ...]  # the size at each call of the schedule
    syms: frozenset = frozenset()  # size symbols this dim depends on
    # an exact data-dependent size's twin: the input's size (a symbol or literal) it equals at every call, or,
    # where it is 1 at every call, one it broadcasts against; a fresh operand may take it (opspec.broadcast_operand)
    twin: "Dim | None" = None

    @staticmethod
    def literal(n: int, calls: int) -> "Dim":
        return Dim(None, n, (n,) * calls)

    @staticmethod
    def symbol(name: str, values) -> "Dim":
        return Dim(name, 0, tuple(values), frozenset([name]))

    @property
    def key(self) -> str:
        if self.base is None:
            return str(self.const)
        if self.const == 0:
            return self.base
        return f"{self.base}{self.const:+d}"

    @property
    def is_literal(self) -> bool:
        return self.base is None

    @property
    def is_data_dependent(self) -> bool:
        """A size that depends on the data (fuzz/program/ops/data_dependent.py)."""
        return self.base is not None and bool(_BOUND_ONLY.search(self.base) or _EXACT.search(self.base))

    @property
    def is_bound_only(self) -> bool:
        """Its values are only a lower bound of the size (a data-dependent size the generator cannot know)."""
        return self.base is not None and bool(_BOUND_ONLY.search(self.base))

    @property
    def is_exact_unbacked(self) -> bool:
        """A data-dependent size whose value the program fixes (a mask that keeps every element, or one): the
        compiler cannot know it, the generator does, so it may broadcast against a size equal to it."""
        return self.base is not None and self.const == 0 and bool(_EXACT.match(self.base)) and self.base.isidentifier()

    @property
    def is_symbol(self) -> bool:
        """A plain size symbol of the schedule ("s0"), as an input's dim can name it."""
        return self.base is not None and self.const == 0 and self.base.isidentifier() and not self.is_data_dependent

    @property
    def min(self) -> int:
        return min(self.values)

    @property
    def max(self) -> int:
        return max(self.values)

    def plus(self, other: "Dim | int") -> "Dim":
        if isinstance(other, int):
            return Dim(self.base, self.const + other, tuple(v + other for v in self.values), self.syms)
        if other.base is None:
            return self.plus(other.const)
        if self.base is None:
            return other.plus(self.const)
        base = "+".join(sorted([self.base, other.base]))
        vals = tuple(a + b for a, b in zip(self.values, other.values))
        return Dim(base, self.const + other.const, vals, self.syms | other.syms)

    def mapped(self, tag: str, fn) -> "Dim":
        """A dim derived non-affinely (slice with step, floordiv, ...)."""
        vals = tuple(fn(v) for v in self.values)
        if self.base is None:
            return Dim.literal(vals[0], len(vals))
        return Dim(f"({self.key}){tag}", 0, vals, self.syms)


@dataclass(frozen=True)
class ValueInfo:
    """What is known about one tensor value of a program."""

    shape: tuple[Dim, ...]
    dtype: str
    root: str  # storage root: input name, or the op output that allocated it
    calls: int  # length of the size schedule (rank-0 values need it too)
    overlapping: bool = False  # some elements share memory (expand): no in-place writes
    is_input: bool = False  # a program input itself (as_strided is only drawn on these)
    # its bits are a program input's own data, read through views only, before any op writes that storage: the
    # same in every correct compiler (no rounding, no -0.0, no NaN payload), so they may be read as integers
    bits_fixed: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    def with_(self, **kw) -> "ValueInfo":
        return replace(self, **kw)


def after_write(env: dict, root: str) -> None:
    """An op wrote storage `root` in place: no value of it keeps an input's bits (ValueInfo.bits_fixed)."""
    for name, v in env.items():
        if v.root == root and v.bits_fixed:
            env[name] = v.with_(bits_fixed=False)


def _unbacked_equal(da: Dim, db: Dim) -> bool:
    """An exact data-dependent size equal to the other size at every call (which is not a mere lower bound)."""
    return ((da.is_exact_unbacked or db.is_exact_unbacked) and not da.is_bound_only and not db.is_bound_only
            and da.values == db.values)


def unbacked_one(d: Dim) -> bool:
    """An exact data-dependent size that is 1 at every call (mask_keep of the first row): eager broadcasts it
    against any size; the compiler assumes an unbacked size does not broadcast, by design, and checks that at
    run time (the judge classifies what the compiled run does there: fuzz/judge/expected.py)."""
    return d.is_exact_unbacked and set(d.values) == {1}


def unbacked_one_meets(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> bool:
    """Whether, aligned from the last dim, an unbacked size that is 1 at run time (unbacked_one) meets another
    size that is larger at some call."""
    return any((unbacked_one(da) and da.key != db.key and db.max > 1) or (unbacked_one(db) and db.key != da.key
                                                                          and da.max > 1)
               for da, db in zip(reversed(a), reversed(b)))


def broadcastable(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> bool:
    """Mutually broadcastable by key: equal keys, or one side a literal 1; or an exact data-dependent size
    that equals the other at every call (an unbacked broadcast), or is 1 at every call (there
    eager broadcasts it; the compiler asserts at run time that it does not, "Runtime assertion failed for
    expression u0 >= 2" on the eager stack, Inductor's size assert, by design)."""
    for da, db in zip(reversed(a), reversed(b)):
        if da.key == db.key or da.key == "1" or db.key == "1" or _unbacked_equal(da, db) or unbacked_one(da) \
                or unbacked_one(db):
            continue
        return False
    return True


def broadcasts_to(src: tuple[Dim, ...], dst: tuple[Dim, ...]) -> bool:
    """src can be broadcast to dst without changing dst (for in-place ops)."""
    if len(src) > len(dst):
        return False
    for ds, dd in zip(reversed(src), reversed(dst)):
        if ds.key == dd.key or ds.key == "1" or _unbacked_equal(ds, dd) or unbacked_one(ds):
            continue
        return False
    return True


def broadcast_shape(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> tuple[Dim, ...]:
    out = []
    n = max(len(a), len(b))
    pa = (None,) * (n - len(a)) + tuple(a)
    pb = (None,) * (n - len(b)) + tuple(b)
    for da, db in zip(pa, pb):
        if da is None:
            out.append(db)
        elif db is None or db.key == "1" or (db.is_exact_unbacked and da.key != "1" and (
                _unbacked_equal(da, db) or unbacked_one(db))):
            out.append(da)  # an exact unbacked size gives way to the size it equals or broadcasts to
        else:
            out.append(db)
    return tuple(out)


def strides_overlap(sizes, strides) -> bool:
    """Whether two index tuples of a view with these sizes and strides (ints) may address one element: sorted
    by stride, each dim longer than 1 must step past all that the dims of smaller strides reach. A view that
    passes has no overlap; one that fails may still have none (the test is only ever too careful)."""
    reach = 0
    for stride, n in sorted((t, n) for n, t in zip(sizes, strides) if n > 1):
        if stride <= reach:
            return True
        reach += stride * (n - 1)
    return False


def norm_dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d
