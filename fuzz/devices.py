"""Device strings ("cpu", "cuda", "cuda:1", "xla"), parsed in one place."""

from __future__ import annotations

from dataclasses import dataclass

TYPES = ("cpu", "cuda", "xla")


class DeviceError(ValueError):
    """A device string shapefuzz does not know."""


@dataclass(frozen=True)
class Device:
    type: str
    index: int | None = None

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


def parse(text: str) -> Device:
    """Device("cuda", 1) for "cuda:1"; DeviceError for anything else than TYPES[:index]."""
    kind, sep, index = str(text).strip().partition(":")
    if kind not in TYPES:
        raise DeviceError(f"unknown device {text!r}; use one of {', '.join(TYPES)} (with :N for an index)")
    if not sep:
        return Device(kind)
    if not index.isdigit():
        raise DeviceError(f"device {text!r}: the index after ':' must be a non-negative integer")
    return Device(kind, int(index))


def device_type(text: str) -> str:
    """"cuda" for "cuda:1"; the text before any ':' for a device this parser does not know."""
    try:
        return parse(text).type
    except DeviceError:
        return str(text).partition(":")[0]


def is_cuda(text: str) -> bool:
    return device_type(text) == "cuda"


def missing(text: str) -> str | None:
    """Why this machine has no `text` device (no CUDA device, a CUDA index past
    the last one, no torch_xla for an XLA device), or None when it has it.
    Imports torch only for a CUDA device."""
    dev = parse(text)
    if dev.type == "xla":
        import importlib.util

        return None if importlib.util.find_spec("torch_xla") else "this Python has no torch_xla (docs/xla.md)"
    if dev.type != "cuda":
        return None
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n == 0:
        return "this machine has no CUDA device"
    if dev.index is not None and dev.index >= n:
        return f"this machine has {n} CUDA device{'s' * (n > 1)} (cuda:0..cuda:{n - 1})"
    return None
