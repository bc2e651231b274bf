"""Compiled backends: a name -> loader table with lazy imports, so optional
stacks (torch_xla) are imported only when asked for.

A backend turns the program function into a compiled callable. Built-in names
map to torch.compile backends; "module:attr" names any torch.compile backend
callable (gm, example_inputs) -> callable, which is how users and the tests
plug in their own (see fuzz/planted.py).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from fuzz.program.ir import RunSettings


class BackendError(ValueError):
    """An unknown or unloadable backend name."""


def _torch_compile_backend(name: str) -> Callable[[], object]:
    return lambda: name


def _openxla():
    importlib.import_module("torch_xla")  # registers the openxla Dynamo backend
    return "openxla"


LOADERS: dict[str, Callable[[], object]] = {
    "eager": _torch_compile_backend("eager"),
    "aot_eager": _torch_compile_backend("aot_eager"),
    "aot_eager_decomp_partition": _torch_compile_backend("aot_eager_decomp_partition"),
    "inductor": _torch_compile_backend("inductor"),
    "openxla": _openxla,
}


def resolve(name: str):
    """The `backend=` argument for torch.compile, or BackendError."""
    if name in LOADERS:
        try:
            return LOADERS[name]()
        except ImportError as e:
            raise BackendError(f"backend {name!r} needs a package that is not installed: {e}") from None
    if ":" in name:
        mod, _, attr = name.partition(":")
        try:
            obj = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise BackendError(f"backend {name!r}: cannot load {attr!r} from {mod!r} ({e})") from None
        if not callable(obj):
            raise BackendError(f"backend {name!r} is not callable")
        return obj
    raise BackendError(f"unknown backend {name!r}; use one of {sorted(LOADERS)} or module:attr")


def known_inductor_options(options: dict) -> dict:
    """The options whose keys the installed torch._inductor.config has."""
    import torch._inductor.config as cfg

    def has(key):
        obj = cfg
        for part in key.split("."):
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True

    return {k: v for k, v in options.items() if has(k)}


@dataclass(frozen=True)
class ModeOptions:
    """options= standing for a mode plus explicit options: torch.compile
    refuses mode and options together, so the mode is spelled out as its
    options (in the torch that runs it), the explicit ones on top."""

    mode: str
    dynamic: bool | None
    options: dict

    def value(self) -> dict:
        import torch

        return {**torch._inductor.list_mode_options(self.mode, self.dynamic), **self.options}

    def source(self) -> str:
        """The same as a Python expression, for a repro."""
        return f"{{**torch._inductor.list_mode_options({self.mode!r}, {self.dynamic!r}), **{self.options!r}}}"


def compile_kwargs(settings: RunSettings) -> dict:
    """torch.compile's keyword arguments but backend, as data: dynamic, and
    for inductor mode or options (known to this torch); a ModeOptions value
    stands for both. compile_program evaluates it, codegen renders it."""
    kw: dict = {"dynamic": settings.dynamic}
    if settings.backend == "inductor":
        options = known_inductor_options(settings.options or {})
        if settings.mode and options:
            kw["options"] = ModeOptions(settings.mode, settings.dynamic, options)
        elif settings.mode:
            kw["mode"] = settings.mode
        elif options:
            kw["options"] = options
    return kw


def compile_program(fn, settings: RunSettings):
    import torch

    kw = {k: v.value() if isinstance(v, ModeOptions) else v for k, v in compile_kwargs(settings).items()}
    return torch.compile(fn, backend=resolve(settings.backend), **kw)
