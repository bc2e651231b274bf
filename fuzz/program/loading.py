"""A program of either kind from its JSON, and its standalone repro: the part
of the program-kind protocol (fuzz/kinds) that the corpus needs, kept below
it so that storing and loading entries depends on no judging code.

- Program (fuzz/program/ir.py): a torch.compile'd function over a size schedule;
- StepProgram (fuzz/program/step_ir.py): torch_xla step sequences; its JSON has "blocks".
"""

from __future__ import annotations

from typing import Any

from fuzz.program.ir import ProgramError

KIND_NAMES = ("compiled", "steps")


def kind_name(p: Any) -> str:
    """"steps" or "compiled", for a program or its JSON object."""
    if isinstance(p, dict):
        return "steps" if "blocks" in p else "compiled"
    return "steps" if type(p).__name__ == "StepProgram" else "compiled"


def unwrap_case(d: Any) -> Any:
    """A case file holds a program, or {"program": ..., "verdict": ...}."""
    if isinstance(d, dict) and "program" in d and "schema" not in d:
        return d["program"]
    return d


def load_program(d: Any):
    """A validated program of either kind from its dict; ProgramError if bad."""
    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    if kind_name(d) == "steps":
        from fuzz.program.step_ir import StepProgram

        return StepProgram.from_dict(d)
    from fuzz.program.ir import Program
    from fuzz.program.typecheck import typecheck  # lazy: pulls in the op database

    p = Program.from_dict(d)
    typecheck(p)
    return p


def harness_is_repro(p) -> bool:
    """Whether a finding of p keeps its full harness as its entry's repro.py: a
    torch_xla step program has no short form, and its harness (~190 lines,
    torch and torch_xla only) is the script a PyTorch/XLA issue carries; a
    torch.compile program's harness (~450 lines) is generated on demand."""
    return kind_name(p) == "steps"


def repro_source(p, title: str = "") -> str:
    """The standalone repro.py of a program of either kind."""
    if kind_name(p) == "steps":
        from fuzz.program.step_codegen import step_repro_source

        return step_repro_source(p, title)
    from fuzz.program.codegen import repro_source as compiled_repro

    return compiled_repro(p, title)
