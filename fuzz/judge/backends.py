"""Compiled backends: a name -> loader table with lazy imports, so optional
stacks (torch_xla) are imported only when asked for.

A backend turns the program function into a compiled callable. Built-in names
map to torch.compile backends; "module:attr" names any torch.compile backend
callable (gm, example_inputs) -> callable, which is how users and the tests
plug in their own (see fuzz/planted.py).

A program file may name a "module:attr" backend, but naming it never imports
it: the module must be allowed by whoever runs shapefuzz (`--backend
module:attr` or `--allow-backend MODULE` on the command line, which set
ALLOW_ENV for the processes it starts). shapefuzz's own planted backends are
allowed always.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass

from fuzz.program.ir import RunSettings


class BackendError(ValueError):
    """An unknown or unloadable backend name."""


ALLOW_ENV = "SHAPEFUZZ_ALLOW_BACKEND"  # comma-separated modules a "module:attr" backend may import
ALWAYS_ALLOWED = frozenset({"fuzz.planted", "fuzz.judge.faults"})  # shapefuzz's own wrong and faulty backends


def allow_modules(modules) -> None:
    """Let "module:attr" backends of these modules be imported, here and in
    every process this one starts (the sandbox, workers, repro.py runs)."""
    mods = set(allowed_modules()) | {m for m in modules if m}
    os.environ[ALLOW_ENV] = ",".join(sorted(mods - ALWAYS_ALLOWED))


def allowed_modules() -> frozenset:
    return ALWAYS_ALLOWED | {m.strip() for m in os.environ.get(ALLOW_ENV, "").split(",") if m.strip()}


def not_allowed(name: str) -> str | None:
    """Why custom backend `name` may not be imported (its module is not
    allowed), with the flag that allows it; None for an allowed or built-in one."""
    mod = name.partition(":")[0]
    if ":" not in name or mod in allowed_modules():
        return None
    return (f"backend {name!r} would import module {mod!r}, which a program file alone never does: "
            f"pass --allow-backend {mod} (or --backend {name}) to run it")


@dataclass(frozen=True)
class Backend:
    """One row of the backend table: everything that differs by backend."""

    name: str
    kind: str = "compiled"  # the program kind it judges (fuzz/kinds)
    component: str = "dynamo"  # the part an upstream report's title names ([inductor], [aotdispatch], ...)
    inductor: bool = False  # takes Inductor's mode= and options=
    requires: str | None = None  # a module it needs, imported when it loads
    devices: tuple | None = None  # the only device types it runs on (None: any)

    @property
    def custom(self) -> bool:
        """A user's torch.compile backend, "module:attr"."""
        return ":" in self.name

    def repro_imports(self) -> list[str]:
        """Lines a standalone repro needs before torch.compile(backend=...): the
        module it requires (registers its Dynamo backend), or exit 77 (skipped)
        with one line where it is not installed. The repro imports sys first."""
        if not self.requires:
            return []
        return ["try:", f"    import {self.requires}", "except ImportError:",
                f"    print('SKIP: cannot run this repro here: it needs {self.requires}, which this Python does "
                "not have', file=sys.stderr)", "    sys.exit(77)"]

    def repro_backend(self) -> tuple[list[str], str]:
        """(import lines, the backend= expression) for a repro. The one gate on code made from a program: every
        script generated from one (repro, harness, short repro, the checks, versions, the trace) gets its
        backend here, so a module:attr backend the command line did not allow is BackendError, never code."""
        if not self.custom:
            return self.repro_imports(), repr(self.name)
        why = not_allowed(self.name)
        if why:
            raise BackendError(why)
        mod, _, attr = self.name.partition(":")
        return ["import importlib"], f"getattr(importlib.import_module({mod!r}), {attr!r})"


BACKENDS: dict[str, Backend] = {b.name: b for b in (
    Backend("eager"),
    Backend("aot_eager", component="aotdispatch"),
    Backend("aot_eager_decomp_partition", component="aotdispatch"),
    Backend("inductor", component="inductor", inductor=True),
    Backend("openxla", component="torch_xla", requires="torch_xla"),
    # not a torch.compile backend: torch_xla step programs on the PJRT device PJRT_DEVICE names
    Backend("xla", kind="steps", component="torch_xla", requires="torch_xla", devices=("cpu",)),
)}


# the built-in torch.compile backends, from the one that compiles least: a finding one of them shows is
# shrunk under it (each candidate is a compile) and confirmed under its own (fuzz/findings/shrink/entry.py)
LADDER = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


def cheaper(name: str) -> list[str]:
    """Backends that compile less than `name` and may show its bugs, cheapest
    first: the LADDER's rungs below a built-in one; for a custom backend, the
    names its callable lists in a `cheaper` attribute (a user's backend that
    wraps Inductor may name aot_eager), none when it lists none."""
    if name in LADDER:
        return list(LADDER[:LADDER.index(name)])
    if name not in BACKENDS and ":" in name:
        try:
            listed = getattr(resolve(name), "cheaper", ())
        except BackendError:
            return []
        return [n for n in listed if isinstance(n, str) and n != name] if isinstance(listed, (list, tuple)) else []
    return []


def backend(name: str) -> Backend:
    """The table row of `name` ("module:attr": a custom backend); BackendError if unknown."""
    if name in BACKENDS:
        return BACKENDS[name]
    if ":" in name and all(name.partition(":")[::2]):
        return Backend(name, component="custom backend")
    raise BackendError(f"unknown backend {name!r}; use one of {sorted(BACKENDS)} or module:attr")


def check(name: str, device: str = "cpu") -> None:
    """BackendError, with the fix, when `name` cannot run here on `device`."""
    import importlib.util

    from fuzz import devices

    b = backend(name)
    if b.requires and importlib.util.find_spec(b.requires) is None:
        hint = (" set it up with `bash scripts/setup-xla.sh` and run this with `.venv-xla/bin/python -m fuzz ...` "
                "(docs/xla.md)" if b.requires == "torch_xla" else "")
        raise BackendError(f"backend {name!r} needs {b.requires}, which this Python does not have;{hint}")
    if b.devices is not None and devices.device_type(device) not in b.devices:
        raise BackendError(f"backend {name!r} runs on {', '.join(b.devices)} only (PJRT_DEVICE picks the XLA "
                           f"device); leave --device at {b.devices[0]}")
    if b.custom:
        resolve(name)


def resolve(name: str):
    """The `backend=` argument for torch.compile, or BackendError."""
    b = backend(name)
    if b.kind != "compiled":
        raise BackendError(f"backend {name!r} judges {b.kind} programs, not torch.compile")
    if not b.custom:
        if b.requires:
            try:
                importlib.import_module(b.requires)  # registers its Dynamo backend
            except ImportError as e:
                raise BackendError(f"backend {name!r} needs a package that is not installed: {e}") from None
        return name
    why = not_allowed(name)
    if why:
        raise BackendError(why)
    mod, _, attr = name.partition(":")
    try:
        obj = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise BackendError(f"backend {name!r}: cannot load {attr!r} from {mod!r} ({e})") from None
    if not callable(obj):
        raise BackendError(f"backend {name!r} is not callable")
    return obj


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
    if settings.fullgraph:
        kw["fullgraph"] = True
    if backend(settings.backend).inductor:
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
