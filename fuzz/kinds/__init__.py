"""The two kinds of program shapefuzz judges, told apart by their JSON:

- Program (fuzz/ir.py): one function compiled by torch.compile and called over
  a size schedule (Inductor, aot_eager, openxla, ...);
- StepProgram (fuzz/xla/steps.py): lazy-tensor step sequences with sync points
  for torch_xla; its JSON has "blocks".

Corpus, replay, shrink and the campaign load programs through here, so an
entry of either kind goes through the same machinery. Imports no torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fuzz.program.ir import Program, ProgramError


def is_step_program(d: Any) -> bool:
    """Whether a program, or its dict, is a torch_xla StepProgram."""
    return ("blocks" in d) if isinstance(d, dict) else hasattr(d, "blocks")


def unwrap_case(d: Any) -> Any:
    """A case file holds a program, or {"program": ..., "verdict": ...}."""
    if isinstance(d, dict) and "program" in d and "schema" not in d:
        return d["program"]
    return d


def is_step_file(path) -> bool:
    """Whether a case file or corpus entry directory holds a StepProgram;
    False when it cannot be read (the command's own loading reports why)."""
    path = Path(path)
    try:
        d = json.loads((path / "program.json" if path.is_dir() else path).read_text())
    except (OSError, ValueError):
        return False
    return is_step_program(unwrap_case(d))


def load_program(d: Any):
    """A Program or StepProgram from its dict, validated; ProgramError if bad."""
    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    if is_step_program(d):
        from fuzz.program.step_ir import StepProgram

        return StepProgram.from_dict(d)
    p = Program.from_dict(d)
    from fuzz.program.typecheck import typecheck  # lazy: pulls in the op database

    typecheck(p)
    return p


def repro_source(p, title: str = "") -> str:
    """The standalone repro.py of either kind."""
    if is_step_program(p):
        from fuzz.program.step_codegen import step_repro_source

        return step_repro_source(p, title)
    from fuzz.program.codegen import repro_source as program_repro

    return program_repro(p, title)
