"""OpSpec: one declaration per op, consumed by the strategies (which args and
params are valid), the validator (check), the shape inference (infer) and the
code generator (render). Families are built by small factories in opdb.py.

Widths (pad widths, narrow lengths) are either an int or a size-relative
expression {"dim": d, "div": k, "add": c} meaning `arg.shape[d] // k + c`, so
that programs exercise size-dependent symbolic arithmetic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.symbolic import Dim, ValueInfo, unbacked_one

# Simplest family first: the strategies draw families in this order, so a
# program shrinks towards the earlier ones.
FAMILIES = ("pointwise", "binary", "pad", "view", "reduction", "cat", "inplace",
            "matrix", "nn", "scan", "index", "shape", "resample", "data")

Args = list  # list[ValueInfo]
Params = dict


def _no_guards(args: Args, params: Params) -> set:
    return set()


@dataclass(frozen=True)
class OpSpec:
    name: str
    family: str
    arity: int
    accepts: Callable[[ValueInfo], bool]
    params: Callable[[Args], st.SearchStrategy]
    check: Callable[[Args, Params], str | None]
    infer: Callable[[Args, Params, str], ValueInfo]
    render: Callable[[list, Params, Args], Any]  # (names, params, arg infos) -> expression, or (statements, result)
    pair: Callable[[ValueInfo, ValueInfo], bool] | None = None  # arity 2: the second operand fits the first
    third: Callable[[ValueInfo, ValueInfo, ValueInfo], bool] | None = None  # arity 3: the third fits the first two
    guards: Callable[[Args, Params], set] = _no_guards
    mutates: bool = False
    inputs_only: bool = False
    # The shape of a fresh program input that fits as the next operand after `chosen`
    # (None: only existing values can): the generator adds such an input when no value fits.
    operand: Callable[[list], tuple | None] | None = None
    api: str = ""  # the torch API exercised ("torch.mm", "F.pad"): reports and `shapefuzz ops` name it
    dtypes: frozenset = frozenset(D.ALL)  # the first operand's dtypes it takes
    label_fn: Callable[[dict], str] | None = None  # a report's name for it, from its params (pad: its mode)
    grad: bool = True  # eager can differentiate it (backward cases draw only such ops)
    # A backward program's params in place of drawn ones, where eager differentiates only some of them
    # (typecheck refuses a backward program whose params this changes); None: all of them.
    grad_params: Callable[[dict], dict] | None = None
    devices: tuple = ()  # the device types whose eager kernels take it ("cpu": integer mm); () every one
    # The operands (by index) whose values the result follows discontinuously: compared with a threshold,
    # rounded to an integer, tested for zero, cast, or deciding a data-dependent size. One ulp of rounding in
    # such a computed float may change the result, so the judge reads those values by the float64 rule
    # (fuzz/judge/by_design.py rounding_edges).
    decides: tuple = ()
    doc: str = ""

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"op {self.name!r}: family {self.family!r} is not one of {FAMILIES}")
        if self.arity not in (1, 2, 3):
            raise ValueError(f"op {self.name!r}: arity must be 1, 2 or 3, got {self.arity}")
        if (self.arity >= 2) != (self.pair is not None):
            raise ValueError(f"op {self.name!r}: set `pair` exactly when arity >= 2")
        if (self.arity == 3) != (self.third is not None):
            raise ValueError(f"op {self.name!r}: set `third` exactly when arity == 3")
        if self.mutates != (self.family == "inplace"):
            raise ValueError(f"op {self.name!r}: `mutates` must be set exactly for the inplace family")
        if not self.name.isidentifier():
            raise ValueError(f"op {self.name!r}: name must be an identifier")
        if any(not isinstance(k, int) or not 0 <= k < self.arity for k in self.decides):
            raise ValueError(f"op {self.name!r}: `decides` names operands by index, each below its arity {self.arity}")

    def runs_on(self, device_type: str) -> bool:
        return not self.devices or device_type in self.devices

    def applicable(self, a: ValueInfo, values: list[ValueInfo]) -> bool:
        if self.inputs_only and not a.is_input:
            return False
        if self.mutates and a.overlapping:
            return False
        if not self.accepts(a):
            return False
        if self.arity == 1:
            return True
        seconds = [b for b in values if self.pair(a, b)] + [b for b in [self.fresh_info([a])] if b]
        if self.arity == 2:
            return bool(seconds)
        return any(self.third(a, b, c) for b in seconds for c in values + [self.fresh_info([a, b])] if c)

    def fresh_info(self, chosen: list) -> ValueInfo | None:
        """What a fresh input made by `operand` would be, or None (no `operand`, or a
        size it needs is data-dependent and cannot be an input's)."""
        if self.operand is None:
            return None
        shape = self.operand(chosen)
        # an input's dims are literals or size symbols: a derived size has no input that matches it by key
        if shape is None or not all(d.is_literal or d.is_symbol for d in shape):
            return None
        info = ValueInfo(shape=tuple(shape), dtype=chosen[0].dtype, root="<fresh>", calls=chosen[0].calls,
                         is_input=True)
        return info if self.fits(chosen, info) else None

    def fits(self, chosen: list, cand: ValueInfo) -> bool:
        """Whether `cand` may be the next operand after `chosen` (arity >= 2)."""
        return self.pair(chosen[0], cand) if len(chosen) == 1 else self.third(chosen[0], chosen[1], cand)

    def label(self, params: dict | None = None) -> str:
        """What a report calls it: label_fn of its params, else the torch API, else its name."""
        if self.label_fn is not None:
            return self.label_fn(params or {})
        return self.api or self.name


_API = re.compile(r"^\(?((?:torch|F)\.[\w.]+)\(|^\(?\{a\}\.(\w+)\(")
_OPERATOR = re.compile(r"^\(\{a\} (\S+) \{[bs]\}\)$")
# the torch function a Python operator on tensors calls: what a report names for "(a + b)"
OPERATOR_API = {"+": "torch.add", "-": "torch.sub", "*": "torch.mul", "/": "torch.div", "==": "torch.eq",
                "<": "torch.lt", "^": "torch.bitwise_xor"}


def api_of(template: str) -> str:
    """The API a declaration's expression template calls ("torch.sin({a})" ->
    "torch.sin", "{a}.to(...)" -> "Tensor.to", an operator "({a} + {b})" -> "torch.add"); "" for none."""
    m = _API.match(template)
    if m:
        return m.group(1) or f"Tensor.{m.group(2)}"
    m = _OPERATOR.match(template)
    return OPERATOR_API.get(m.group(1), "") if m else ""


def broadcast_operand(chosen: list) -> tuple:
    """A fresh operand that broadcasts to the first: its shape, derived sizes as 1, an exact data-dependent
    size as the input size it equals (its twin: an unbacked broadcast); one that is 1 at every call as its
    twin, else as 2 (an unbacked 1 against a larger size)."""
    a = chosen[0]
    return tuple(d if d.is_literal or d.is_symbol else d.twin if d.twin is not None
                 else Dim.literal(2 if unbacked_one(d) else 1, a.calls) for d in a.shape)


# ---- widths ---------------------------------------------------------------

def width_values(w, info: ValueInfo) -> tuple[int, ...]:
    """The width at each call of the schedule."""
    if isinstance(w, int):
        return (w,) * info.calls
    d = info.shape[w["dim"]]
    return tuple(v // w["div"] + w["add"] for v in d.values)


def render_width(w, arg: str) -> str:
    if isinstance(w, int):
        return str(w)
    s = f"{arg}.shape[{w['dim']}] // {w['div']}"
    if w["add"]:
        s += f" {'+' if w['add'] > 0 else '-'} {abs(w['add'])}"
    return s


def width_syms(w, info: ValueInfo) -> set:
    return set() if isinstance(w, int) else set(info.shape[w["dim"]].syms)


def check_width(w, info: ValueInfo) -> str | None:
    if isinstance(w, bool) or not isinstance(w, (int, dict)):
        return f"width {w!r} must be an int or a {{dim, div, add}} dict"
    if isinstance(w, dict):
        if set(w) != {"dim", "div", "add"}:
            return f"width {w!r} must have exactly the keys dim, div, add"
        if not isinstance(w["div"], int) or w["div"] < 1:
            return f"width {w!r}: div must be a positive int"
        if not isinstance(w["dim"], int) or not -info.rank <= w["dim"] < info.rank:
            return f"width {w!r}: dim out of range for rank {info.rank}"
    return None


def _clip(lo: int, hi: int, lim: int) -> tuple[int, int]:
    """[lo, hi] cut to [-lim, lim] where they overlap, else the end nearest 0."""
    a, b = max(lo, -lim), min(hi, lim)
    if a > b:
        a = b = lo if lo > lim else hi
    return a, b


def widths(info: ValueInfo, lo: tuple[int, ...], hi: tuple[int, ...], *, max_literal: int = 4) -> st.SearchStrategy:
    """Widths w with lo[i] <= w <= hi[i] at every call i: a literal first
    (shrinks towards 0, or the bound nearest 0), else `shape[d] // k + c` on
    a symbolic dim. Raises ValueError when no width fits."""
    options = []
    if max(lo) <= min(hi):
        options.append(st.integers(*_clip(max(lo), min(hi), max_literal)))
    rel = []
    for d, dim in enumerate(info.shape):
        if dim.is_literal:
            continue
        for k in (2, 3, 1):
            c_lo = max(l - v // k for l, v in zip(lo, dim.values))
            c_hi = min(h - v // k for h, v in zip(hi, dim.values))
            if c_lo <= c_hi:
                rel.append((d - info.rank, k, *_clip(c_lo, c_hi, 2)))
    if rel:
        options.append(
            st.sampled_from(rel).flatmap(
                lambda r: st.integers(r[2], r[3]).map(lambda c: {"dim": r[0], "div": r[1], "add": c})
            )
        )
    if not options:
        raise ValueError("no width satisfies the range at every call")
    return st.one_of(options)


# ---- small helpers shared by factories --------------------------------------

def calls(info: ValueInfo) -> int:
    return info.calls


def product_dim(dims: list[Dim], calls_: int) -> Dim:
    if not dims:
        return Dim.literal(1, calls_)
    vals = tuple(math.prod(d.values[i] for d in dims) for i in range(calls_))
    if all(d.is_literal for d in dims):
        return Dim.literal(vals[0], calls_)
    syms = frozenset().union(*(d.syms for d in dims))
    return Dim("*".join(d.key for d in dims), 0, vals, syms)


def py_literal(v) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        if math.isnan(v):
            return "float('nan')"
    return repr(v)


def index_expr(dim: int, item: str) -> str:
    """Index text applying `item` at a negative dim, valid for any rank."""
    return ", ".join(["...", item] + [":"] * (-dim - 1))


def slice_text(start, stop, step) -> str:
    s = f"{'' if start is None else start}:{'' if stop is None else stop}"
    if step != 1:
        s += f":{step}"
    return s


def slice_len(v: int, start, stop, step) -> int:
    return len(range(*slice(start, stop, step).indices(v)))


@dataclass
class Registry:
    ops: dict = field(default_factory=dict)

    def add(self, spec: OpSpec) -> OpSpec:
        if spec.name in self.ops:
            raise ValueError(f"op {spec.name!r} is declared twice")
        self.ops[spec.name] = spec
        return spec

    def __getitem__(self, name: str) -> OpSpec:
        return self.ops[name]

    def __contains__(self, name: str) -> bool:
        return name in self.ops

    def __iter__(self):
        return iter(self.ops.values())

    def family(self, fam: str) -> list[OpSpec]:
        return [o for o in self.ops.values() if o.family == fam]
