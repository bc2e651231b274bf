"""Which lines of PyTorch's compiler a case reaches: the measure
for comparing generation modes, and the signal coverage guidance needs.

sys.monitoring (Python 3.12+) LINE events, each location reported once per
process: the callback returns DISABLE after a location's first event, in the
compiler's files and elsewhere alike, so a process pays one callback per line
it ever reaches, not per line it executes. A worker therefore reports, per
case, the compiler lines no earlier case of that process reached; the
campaign keeps the union (fuzz/campaign/state.py, coverage.txt).

Python 3.11 has no sys.monitoring: `available()` says why, and `shapefuzz run
--coverage` refuses to start there."""

from __future__ import annotations

import os
import sys

# The compiler: relative to torch's package dir (a file, or a dir and what is under it).
PARTS = ("_inductor", "_dynamo", "_functorch", "_subclasses", os.path.join("fx", "experimental", "symbolic_shapes.py"))
ENV = "SHAPEFUZZ_COVERAGE"  # set to 1 in a worker's environment: measure there


def available() -> str | None:
    """None where lines can be measured here; else why not."""
    if not hasattr(sys, "monitoring"):
        return (f"--coverage needs Python 3.12 or newer (sys.monitoring); this is Python "
                f"{sys.version_info.major}.{sys.version_info.minor}")
    return None


class CompilerLines:
    """Lines of the compiler's files reached since the last take(), as "_inductor/graph.py:123"."""

    def __init__(self, torch_dir: str | None = None):
        if torch_dir is None:
            import torch

            torch_dir = os.path.dirname(torch.__file__)
        self._root = torch_dir.rstrip(os.sep) + os.sep
        self._prefixes = tuple(os.path.join(torch_dir, p) for p in PARTS)
        self._new: list = []
        self._tool = None

    def start(self) -> "CompilerLines":
        mon = sys.monitoring
        for tool in (mon.COVERAGE_ID, 4, 5):  # another coverage tool (a test run's) may hold the first
            if mon.get_tool(tool) is None:
                mon.use_tool_id(tool, "shapefuzz")
                self._tool = tool
                break
        else:
            raise RuntimeError("no sys.monitoring tool id is free")
        mon.register_callback(self._tool, mon.events.LINE, self._line)
        mon.set_events(self._tool, mon.events.LINE)
        return self

    def stop(self) -> None:
        if self._tool is not None:
            mon = sys.monitoring
            mon.set_events(self._tool, 0)
            mon.register_callback(self._tool, mon.events.LINE, None)
            mon.free_tool_id(self._tool)
            self._tool = None

    def _line(self, code, line):
        name = code.co_filename
        if name.startswith(self._prefixes):
            self._new.append(f"{name[len(self._root):]}:{line}")
        return sys.monitoring.DISABLE

    def take(self) -> list:
        """The lines first reached since the last call (each once: the list is read and emptied)."""
        new, self._new = self._new, []
        return sorted(set(new))


_here: CompilerLines | None = None


def start_if_asked() -> None:
    """In a worker: measure from now on where its environment asks (ENV) and this Python can."""
    global _here
    if os.environ.get(ENV) == "1" and available() is None and _here is None:
        _here = CompilerLines().start()


def take() -> list | None:
    """This process's new compiler lines since the last call; None where nothing is measured."""
    return None if _here is None else _here.take()
