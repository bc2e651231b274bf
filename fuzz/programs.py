"""The two kinds of program shapefuzz judges, told apart by their JSON:

- Program (fuzz/ir.py): one function compiled by torch.compile and called over
  a size schedule (Inductor, aot_eager, openxla, ...);
- StepProgram (fuzz/xla/steps.py): lazy-tensor step sequences with sync points
  for torch_xla; its JSON has "blocks".

Corpus, replay, shrink and the campaign load programs through here, so an
entry of either kind goes through the same machinery. Imports no torch.
"""

from __future__ import annotations

from typing import Any

from .ir import Program, ProgramError


def is_step_program(d: Any) -> bool:
    return ("blocks" in d) if isinstance(d, dict) else hasattr(d, "blocks")


def load_program(d: Any):
    """A Program or StepProgram from its dict, validated; ProgramError if bad."""
    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    if is_step_program(d):
        from .xla.steps import StepProgram

        return StepProgram.from_dict(d)
    p = Program.from_dict(d)
    from .typecheck import typecheck  # lazy: pulls in the op database

    typecheck(p)
    return p


def repro_source(p, title: str = "") -> str:
    """The standalone repro.py of either kind."""
    if is_step_program(p):
        from .xla.codegen import step_repro_source

        return step_repro_source(p, title)
    from .codegen import repro_source as program_repro

    return program_repro(p, title)
