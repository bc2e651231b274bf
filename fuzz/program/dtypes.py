"""Dtypes by name, with torch's type-promotion rules, so strategies can infer
result dtypes without importing torch. tests/test_dtypes.py checks every rule
here against torch.result_type."""

from __future__ import annotations

# Simplest first: strategies draw from this order, so shrinking moves to float32.
# The narrow integers come last: they are drawn less, and shrink away first.
ALL = ("float32", "float16", "bfloat16", "float64", "int32", "int64", "bool", "uint8", "int8", "int16")
FLOATING = ("float32", "float16", "bfloat16", "float64")
INTEGRAL = ("int32", "int64", "uint8", "int8", "int16")
NARROW = ("float16", "bfloat16", "uint8", "int8", "int16")

_CATEGORY = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1,
             "float16": 2, "bfloat16": 2, "float32": 2, "float64": 2}
_BITS = {"bool": 1, "uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
         "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
ITEMSIZE = {dt: max(bits // 8, 1) for dt, bits in _BITS.items()}
DEFAULT_FLOAT = "float32"


def is_floating(dt: str) -> bool:
    return dt in FLOATING


def category(dt: str) -> int:
    """0 bool, 1 integer, 2 floating."""
    return _CATEGORY[dt]


def promote(a: str, b: str) -> str:
    """Result dtype of a binary op between two tensors of the same rank class."""
    if a == b:
        return a
    ca, cb = _CATEGORY[a], _CATEGORY[b]
    if ca != cb:
        return a if ca > cb else b
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    if "uint8" in (a, b) and ca == 1:  # uint8 with a signed int: the next signed type holding both
        other = b if a == "uint8" else a
        return "int16" if other == "int8" else other
    return a if _BITS[a] >= _BITS[b] else b


def promote_scalar(tensor: str, scalar: object) -> str:
    """Result dtype of tensor <op> python scalar (bool, int or float)."""
    if isinstance(scalar, bool):
        kind = 0
    elif isinstance(scalar, int):
        kind = 1
    else:
        kind = 2
    if kind <= _CATEGORY[tensor]:
        return tensor
    return "int64" if kind == 1 else DEFAULT_FLOAT


def floating_result(dt: str) -> str:
    """Dtype of a floating-only unary op (sin, exp, ...) applied to dt."""
    return dt if is_floating(dt) else DEFAULT_FLOAT


def can_cast(src: str, dst: str) -> bool:
    """Whether an in-place op may write a src-typed result into a dst tensor."""
    return _CATEGORY[src] <= _CATEGORY[dst]


def sum_result(dt: str) -> str:
    """sum/prod promote bool and integers to int64."""
    return dt if is_floating(dt) else "int64"
