"""Tensors an op makes inside the program: weights, running statistics and
index tensors, built from arange so they are deterministic, cost no input,
and take symbolic sizes from the tensor they serve (a weight whose in-dim is
`x.shape[-1]` follows x's dynamic dim through every call)."""

from __future__ import annotations


def shape_text(dims: list) -> str:
    """A Python tuple from dim texts ("x.shape[1]", "3")."""
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def weight(dims: list, like: str, salt: int = 0) -> str:
    """A float tensor of the given dims on `like`'s device and dtype, values
    in [-1, 1] that differ element to element."""
    numel = " * ".join(f"({d})" for d in dims) or "1"
    return (f"torch.arange({numel}, device={like}.device).reshape({shape_text(dims)})"
            f".to({like}.dtype).mul({0.37 + 0.11 * salt}).add({salt}).sin()")


def index(length: str, bound: str, like: str, k: int, c: int) -> str:
    """A 1-d int64 index tensor of `length` entries, each (i*k + c) % bound:
    always in range, a rotation when k == 1 (no repeats), repeats otherwise."""
    i = f"torch.arange({length}, device={like}.device)"
    if k != 1:
        i = f"({i} * {k})"
    return f"(({i} + {c}) % {bound})" if c else f"({i} % {bound})"


def dim_text(x: str, d: int) -> str:
    return f"{x}.shape[{d}]"
