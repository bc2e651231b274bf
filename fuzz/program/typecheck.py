"""Abstract interpretation of a Program over the op database: the ValueInfo of
every value, or a ProgramError naming the first thing that makes it invalid.
Used to validate loaded cases, by the strategies' tests, and by the shrinker.
Every value is held to the resource limits of fuzz/program/ir.py (rank,
elements at every call)."""

from __future__ import annotations

from fuzz.program import dtypes as D
from fuzz.program.ir import DYNAMIC_FLAGS, LAYOUTS, MARKS, Program, ProgramError, TensorInput, limit_error
from fuzz.program.opdb import OPS
from fuzz.program.symbolic import Dim, ValueInfo


def input_info(p: Program, inp: TensorInput) -> ValueInfo:
    calls = p.calls
    dims = []
    for d in inp.shape:
        if isinstance(d, bool) or not isinstance(d, (int, str)):
            raise ProgramError(f"input {inp.name}: dims must be ints or size symbols, got {d!r}")
        if isinstance(d, str):
            if d not in p.sizes:
                raise ProgramError(f"input {inp.name}: unknown size symbol {d!r}")
            dims.append(Dim.symbol(d, p.sizes[d]))
        else:
            if d < 0:
                raise ProgramError(f"input {inp.name}: negative size {d}")
            dims.append(Dim.literal(d, calls))
    overlapping = inp.layout == "expanded"
    return ValueInfo(shape=tuple(dims), dtype=inp.dtype, root=inp.name, calls=calls, overlapping=overlapping,
                     is_input=True)


def check_input(p: Program, inp: TensorInput) -> None:
    if inp.dtype not in D.ALL:
        raise ProgramError(f"input {inp.name}: unknown dtype {inp.dtype!r}")
    if inp.layout not in LAYOUTS:
        raise ProgramError(f"input {inp.name}: unknown layout {inp.layout!r} (one of {LAYOUTS})")
    rank = len(inp.shape)
    if inp.layout == "transposed" and rank < 2:
        raise ProgramError(f"input {inp.name}: transposed layout needs rank >= 2")
    if inp.layout == "expanded" and not 0 <= inp.layout_dim < rank:
        raise ProgramError(f"input {inp.name}: expanded layout_dim {inp.layout_dim} out of range")
    if inp.marks and len(inp.marks) != rank:
        raise ProgramError(f"input {inp.name}: {len(inp.marks)} marks for rank {rank}")
    for m in inp.marks:
        if m not in MARKS:
            raise ProgramError(f"input {inp.name}: unknown mark {m!r} (one of {MARKS})")


def over_limits(v: ValueInfo) -> str | None:
    """Why a value is past the resource limits (rank, elements at a call), or None."""
    return limit_error("a value", lambda call: [d.values[call] for d in v.shape], v.calls)


def _check_limits(what: str, v: ValueInfo) -> None:
    why = limit_error(what, lambda call: [d.values[call] for d in v.shape], v.calls)
    if why:
        raise ProgramError(why)


def typecheck(p: Program) -> dict[str, ValueInfo]:
    """Return name -> ValueInfo for every input and op result."""
    if p.settings.dynamic not in DYNAMIC_FLAGS:
        raise ProgramError(f"settings.dynamic must be one of {DYNAMIC_FLAGS}")
    if not p.inputs:
        raise ProgramError("a program needs at least one input")
    env: dict[str, ValueInfo] = {}
    for inp in p.inputs:
        if not inp.name.isidentifier() or inp.name in env:
            raise ProgramError(f"input name {inp.name!r} is not a fresh identifier")
        check_input(p, inp)
        env[inp.name] = input_info(p, inp)
        _check_limits(f"input {inp.name}", env[inp.name])
    for i, call in enumerate(p.ops):
        if call.op not in OPS:
            raise ProgramError(f"ops[{i}]: unknown op {call.op!r}")
        spec = OPS[call.op]
        if len(call.args) != spec.arity:
            raise ProgramError(f"ops[{i}] {call.op}: takes {spec.arity} args, got {len(call.args)}")
        for a in call.args:
            if a not in env:
                raise ProgramError(f"ops[{i}] {call.op}: undefined value {a!r}")
        args = [env[a] for a in call.args]
        if spec.inputs_only and not args[0].is_input:
            raise ProgramError(f"ops[{i}] {call.op}: applies to program inputs only")
        try:
            reason = spec.check(args, call.params)
            if reason is None and spec.arity == 2 and not spec.pair(*args):
                reason = "operands do not fit together"
        except ProgramError:
            raise
        except Exception as e:  # noqa: BLE001 - a hand-written case: any bad param is bad input
            reason = f"malformed params ({type(e).__name__}: {e})"
        if reason:
            raise ProgramError(f"ops[{i}] {call.op}: {reason}")
        if not call.out.isidentifier() or call.out in env:
            raise ProgramError(f"ops[{i}]: output name {call.out!r} is not a fresh identifier")
        try:
            env[call.out] = spec.infer(args, call.params, call.out)
        except Exception as e:  # noqa: BLE001
            raise ProgramError(f"ops[{i}] {call.op}: malformed params ({type(e).__name__}: {e})") from None
        _check_limits(f"ops[{i}] {call.op}: its result", env[call.out])
    if not p.outputs:
        raise ProgramError("a program needs at least one output")
    for o in p.outputs:
        if o not in env:
            raise ProgramError(f"output {o!r} is not a value of the program")
    if p.calls < 1:
        raise ProgramError("the size schedule is empty")
    return env
