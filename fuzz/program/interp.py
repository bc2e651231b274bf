"""Program -> Python callables, by executing the code generator's text, so
the in-process run and the standalone repro.py cannot drift apart."""

from __future__ import annotations

import hashlib
import linecache
from dataclasses import dataclass
from typing import Callable

from fuzz.program.codegen import module_source, rounding_lines
from fuzz.program.ir import Program


@dataclass
class Loaded:
    program: Callable  # the program function (uncompiled)
    make_inputs: Callable  # make_inputs(call, fp64=False) -> list of tensors
    mark_inputs: Callable  # applies the dynamic markings in place
    dynamic_dims: list  # (input, dim) whose calls must reuse one graph (codegen.reuse_dims)
    backward: bool  # judge gradients too
    source: str
    # the computed floats a discontinuous op reads, and the program taking them as given (codegen.rounding_lines);
    # None where it has none
    edge_values: Callable | None = None
    replayed: Callable | None = None


def load(p: Program) -> Loaded:
    src = module_source(p) + "\n".join(rounding_lines(p)) + "\n"
    # A linecache entry gives tracebacks and Dynamo real source lines.
    filename = f"<shapefuzz-{hashlib.sha1(src.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns: dict = {"__name__": "shapefuzz_program"}
    exec(compile(src, filename, "exec"), ns)
    return Loaded(ns["program"], ns["make_inputs"], ns["mark_inputs"], ns["DYNAMIC_DIMS"], ns["BACKWARD"], src,
                  ns.get("edge_values"), ns.get("replayed"))
