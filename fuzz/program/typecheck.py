"""Abstract interpretation of a Program over the op database: the ValueInfo of
every value, or a ProgramError naming the first thing that makes it invalid.
Used to validate loaded cases, by the strategies' tests, and by the shrinker.
Every value is held to the resource limits of fuzz/program/ir.py (rank,
elements at every call)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from fuzz.program import dtypes as D
from fuzz.program.ir import (DYNAMIC_FLAGS, LAYOUTS, MARKS, MAX_ELEMENTS, VIEWS, Program, ProgramError, TensorInput,
                             limit_error)
from fuzz.program.layouts import LAYOUT_TABLE, view_shape, window_fits
from fuzz.program.opdb import OPS
from fuzz.program.symbolic import Dim, ValueInfo, after_write


def input_info(p: Program, inp: TensorInput, env: dict | None = None) -> ValueInfo:
    """The ValueInfo of an input; an aliasing one shares its base's storage
    root (env: the inputs before it), so no op writes one while reading the other."""
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
    overlapping, root = LAYOUT_TABLE[inp.layout].overlapping if inp.layout in LAYOUT_TABLE else False, inp.name
    if inp.alias and env and inp.alias.get("of") in env:
        base = env[inp.alias["of"]]
        overlapping, root = base.overlapping, base.root
    return ValueInfo(shape=tuple(dims), dtype=inp.dtype, root=root, calls=calls, overlapping=overlapping,
                     is_input=True, bits_fixed=True)


def check_input(p: Program, inp: TensorInput, earlier: dict) -> None:
    """earlier: name -> TensorInput of the inputs before it."""
    if inp.dtype not in D.ALL:
        raise ProgramError(f"input {inp.name}: unknown dtype {inp.dtype!r}")
    if inp.layout not in LAYOUTS:
        raise ProgramError(f"input {inp.name}: unknown layout {inp.layout!r} (one of {LAYOUTS})")
    rank = len(inp.shape)
    reason = LAYOUT_TABLE[inp.layout].needs(inp)
    if reason:
        raise ProgramError(f"input {inp.name}: {inp.layout} layout {reason}")
    if inp.alias is not None:
        _check_alias(p, inp, earlier)
    if inp.marks and len(inp.marks) != rank:
        raise ProgramError(f"input {inp.name}: {len(inp.marks)} marks for rank {rank}")
    for m in inp.marks:
        if m not in MARKS:
            raise ProgramError(f"input {inp.name}: unknown mark {m!r} (one of {MARKS})")


def _check_alias(p: Program, inp: TensorInput, earlier: dict) -> None:
    a = inp.alias
    if not isinstance(a, dict) or a.get("of") not in earlier:
        raise ProgramError(f"input {inp.name}: alias must name an earlier input in 'of'")
    if a.get("view") not in VIEWS:
        raise ProgramError(f"input {inp.name}: alias view {a.get('view')!r} is not one of {VIEWS}")
    base = earlier[a["of"]]
    if base.alias is not None:
        raise ProgramError(f"input {inp.name}: aliases {base.name}, which is an alias itself")
    shape = view_shape(a, base)
    if shape is None or list(inp.shape) != shape:
        raise ProgramError(f"input {inp.name}: its shape {inp.shape} is not the {a['view']} view of {base.name}")
    if inp.dtype != base.dtype or inp.layout != "contiguous":
        raise ProgramError(f"input {inp.name}: an alias has its base's dtype and no layout of its own")
    if a.get("view") == "narrow" and not window_fits(a, min(input_info(p, base).shape[a["dim"]].values)):
        raise ProgramError(f"input {inp.name}: the narrow window leaves {base.name}'s dim at some call")
    calls = a.get("calls")
    if calls is not None and (not isinstance(calls, list) or len(calls) != p.calls):
        raise ProgramError(f"input {inp.name}: alias calls must have one bool per call of the schedule")


def over_limits(v: ValueInfo) -> str | None:
    """Why a value is past the resource limits (rank, elements at a call), or None."""
    return limit_error("a value", lambda call: [d.values[call] for d in v.shape], v.calls)


def _check_limits(what: str, v: ValueInfo) -> None:
    why = limit_error(what, lambda call: [d.values[call] for d in v.shape], v.calls)
    if why:
        raise ProgramError(why)


def _check_storage(inp: TensorInput, v: ValueInfo) -> None:
    """The storage behind an input (a strided view's is `step` times its elements) within MAX_ELEMENTS at
    every call: what a case allocates, not only what it shows."""
    layout = LAYOUT_TABLE.get(inp.layout)
    if layout is None or inp.alias:  # an alias shares its base's storage, checked with the base
        return
    for call in range(v.calls):
        dims = [d.values[call] for d in v.shape]
        n = layout.storage_elements(dims, inp)
        if n > MAX_ELEMENTS:
            raise ProgramError(f"input {inp.name}: its {inp.layout} layout needs a storage of {n} elements (shape "
                               f"{dims}) at call {call}, over the limit of 2**24 = {MAX_ELEMENTS} elements per tensor")


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
        check_input(p, inp, {x.name: x for x in p.inputs[:len(env)]})
        env[inp.name] = input_info(p, inp, env)
        _check_limits(f"input {inp.name}", env[inp.name])
        _check_storage(inp, env[inp.name])
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
        if not spec.runs_on(p.device_type()):
            raise ProgramError(f"ops[{i}] {call.op}: eager runs it on {', '.join(spec.devices)} only, "
                               f"not {p.device_type()}")
        params = ReadParams(call.params)
        try:
            reason = spec.check(args, params)
            if reason is None and any(not spec.fits(args[:i], args[i]) for i in range(1, spec.arity)):
                reason = "operands do not fit together"
            if reason is None and p.settings.backward and spec.grad_params \
                    and spec.grad_params(dict(call.params)) != call.params:
                reason = "eager cannot differentiate it with these params (a backward program)"
        except ProgramError:
            raise
        except Exception as e:  # noqa: BLE001 - a hand-written case: any bad param is bad input
            reason = params.why(e)
        if reason:
            _unknown_param(i, call, params)  # a misspelt param is named, not what its absence broke
            raise ProgramError(f"ops[{i}] {call.op}: {reason}")
        if not call.out.isidentifier() or call.out in env:
            raise ProgramError(f"ops[{i}]: output name {call.out!r} is not a fresh identifier")
        try:
            env[call.out] = spec.infer(args, params, call.out)
            if spec.mutates:
                after_write(env, args[0].root)
            spec.render(list(call.args), params, args)  # the params code generation reads count as taken
        except Exception as e:  # noqa: BLE001
            _unknown_param(i, call, params)
            raise ProgramError(f"ops[{i}] {call.op}: {params.why(e)}") from None
        _unknown_param(i, call, params)
        _check_limits(f"ops[{i}] {call.op}: its result", env[call.out])
    if not p.outputs:
        raise ProgramError("a program needs at least one output")
    for o in p.outputs:
        if o not in env:
            raise ProgramError(f"output {o!r} is not a value of the program")
    if p.calls < 1:
        raise ProgramError("the size schedule is empty")
    return env


def _unknown_param(i: int, call, params: "ReadParams") -> None:
    """ProgramError for a param the op does not take: not in op_params.json, and not read by its code."""
    takes = op_params().get(call.op, ())
    unknown = [k for k in call.params if k not in takes and k not in params.read]
    if unknown:
        raise ProgramError(f"ops[{i}] {call.op}: unknown param {unknown[0]!r} (it takes "
                           f"{', '.join(takes) or 'no params'})")


@lru_cache(maxsize=1)
def op_params() -> dict:
    """op name -> the param names it takes (op_params.json beside this module)."""
    with open(Path(__file__).with_name("op_params.json"), encoding="utf-8") as f:
        return {k: tuple(v) for k, v in json.load(f)["ops"].items()}


class ReadParams(dict):
    """An op's params that note which keys the op's check, infer and render
    ask for by name (iterating them, as a format(**params) does, asks for none):
    a key neither op_params.json lists nor they ask for is a param the op does
    not take (a typo, a hand edit), refused on load rather than ignored; a key
    they ask for that is missing is named as such."""

    def __init__(self, params: dict):
        super().__init__(params)
        self.read: set = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)

    def why(self, e: Exception) -> str:
        """What a param error raised by the op's own code means."""
        if isinstance(e, KeyError) and e.args and isinstance(e.args[0], str) and e.args[0] in self.read \
                and not super().__contains__(e.args[0]):
            return f"missing param {e.args[0]!r}"
        return f"malformed params ({type(e).__name__}: {e})"
