"""The program IR: plain dataclasses with a versioned JSON form.

A program is a straight-line function of its input tensors. Input shapes name
size symbols ("s0") or literal ints; `sizes` gives each symbol's value at every
call of the size schedule, and one compiled callable is called once per entry.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = 1

from fuzz.program.layouts import LAYOUTS, VIEWS  # noqa: F401 - re-exported: the IR's vocabulary
MARKS = ("static", "dynamic", "maybe_dynamic", "unbacked")
DYNAMIC_FLAGS = (None, True, False)

# Resource limits of one case, checked when a program is loaded (typecheck,
# step_ir.check); the strategies never exceed them. A case file past them is
# bad input, not a case to run out of memory on.
MAX_RANK = 8  # dims of any tensor a program makes
MAX_ELEMENTS = 1 << 24  # elements of any tensor at any call (64 MiB as float32)
MAX_CALLS = 64  # calls in a size schedule

# The op the shrinker puts in place of any op a bug does not need (an identity
# for finite values, on every dtype and rank): a minimal program that still
# holds it needs "some op" there, not that one. Its family is what a value
# signature then names (tests/test_signature.py checks it against the op database).
NEUTRAL_OP = "nan_to_num"
NEUTRAL_FAMILY = "pointwise"
# The op the shrinker puts in place of two ops that each read one operand a bug
# needs (two aliasing inputs, say): one op reading both. Its family is allowed
# in a bucket the way NEUTRAL_FAMILY is.
NEUTRAL_BINARY = "add"
NEUTRAL_BINARY_FAMILY = "binary"
# Families whose ops share one compiler path, with the op (and the Dynamo settings it
# needs to be in the graph) the shrinker tries in place of any of them: a bug on the
# path of unbacked sizes is one bug whichever data-dependent op took it there.
REPRESENTATIVES = {"data": ("nonzero", {"capture_dynamic_output_shape_ops": True})}


def dtype_class(dt: str) -> str:
    """The class of a dtype a minimal signature names: float32 is the default ("")."""
    return {"bool": "bool", "int32": "int", "int64": "int", "float16": "half", "bfloat16": "half",
            "float64": "double", "float32": "", "uint8": "narrow-int", "int8": "narrow-int",
            "int16": "narrow-int"}.get(dt, dt)


class ProgramError(ValueError):
    """A program (or its JSON) is malformed, of another schema, or invalid."""


def limit_error(what: str, shape_at, calls: int) -> str | None:
    """Why a tensor is past the resource limits, or None. shape_at(call) is
    its shape (a sequence of ints) at that call of the schedule."""
    shape = list(shape_at(0)) if calls else []
    if len(shape) > MAX_RANK:
        return f"{what} has rank {len(shape)}, over the limit of {MAX_RANK} dims"
    for call in range(calls):
        dims = list(shape_at(call))
        n = 1
        for d in dims:
            n *= d
        if n > MAX_ELEMENTS:
            return (f"{what} has {n} elements (shape {dims}) at call {call}, over the limit of "
                    f"2**24 = {MAX_ELEMENTS} elements per tensor")
    return None


class JsonForm:
    """The JSON round trip of a program dataclass; `from_dict` validates."""

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_json(cls, text: str):
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise ProgramError(f"not valid JSON: {e}") from None
        return cls.from_dict(d)


@dataclass
class TensorInput:
    name: str
    shape: list  # items: int (literal size) or str (size symbol)
    dtype: str = "float32"
    layout: str = "contiguous"  # one of LAYOUTS (fuzz/program/layouts.py)
    layout_dim: int = 0  # expanded: the dim with stride 0; strided: the dim stepped through
    scale: float = 1.0  # values drawn ~ N(0, scale) for floats, ints in [-8, 8]
    marks: list = field(default_factory=list)  # per dim, one of MARKS
    offset: int = 3  # offset layout: the storage offset, in elements
    step: int = 2  # strided layout: x[::step] along layout_dim
    perm: list = field(default_factory=list)  # permuted layout: the dims in storage order
    alias: dict | None = None  # a view of an earlier input's storage instead of its own (layouts.py)
    mark_negative: bool = False  # markings name dims counted from the end (-1 for the last)
    mark_range: dict = field(default_factory=dict)  # dim (as str) -> [min, max] given to mark_dynamic


@dataclass
class OpCall:
    op: str
    args: list  # value names (inputs x0.., results v0..)
    params: dict
    out: str


@dataclass
class RunSettings:
    backend: str = "inductor"
    device: str = "cpu"
    dynamic: bool | None = None  # torch.compile(dynamic=...)
    mode: str | None = None  # torch.compile(mode=...)
    options: dict = field(default_factory=dict)  # inductor config overrides
    fullgraph: bool = False  # torch.compile(fullgraph=...): a graph break is an error
    backward: bool = False  # floating inputs require grad; gradients of a loss of the outputs are judged too
    dynamo: dict = field(default_factory=dict)  # torch._dynamo.config overrides (strategies/settings.py DYNAMO)


@dataclass
class Program(JsonForm):
    sizes: dict  # symbol -> list of sizes, one per call of the schedule
    inputs: list  # list[TensorInput]
    ops: list  # list[OpCall]
    outputs: list  # value names returned, in order
    settings: RunSettings = field(default_factory=RunSettings)
    seed: int = 0
    schema: int = SCHEMA_VERSION

    @property
    def calls(self) -> int:
        for v in self.sizes.values():
            return len(v)
        return 1

    def op_classes(self) -> str:
        """The op families it uses, comma-joined: what a value finding's signature names."""
        from fuzz.program.opdb import OPS  # lazy: the op database pulls in hypothesis

        fams = {OPS[c.op].family if c.op in OPS else f"?{c.op}" for c in self.ops}
        return ",".join(sorted(fams)) or "-"

    def device_type(self) -> str:
        from fuzz.devices import device_type

        return device_type(self.settings.device)

    def minimal_parts(self) -> dict:
        """What a minimal signature names besides the outcome and device: the
        op kinds in order (family, with the params that are names or flags, a
        dtype as its class) and the features of inputs and settings that are
        not the defaults. Read off a shrunk program, every one of them is
        something the bug needs (the shrinker took away all it could)."""
        def joined(items) -> str:
            return ",".join(sorted({i for i in items if i})) or "-"

        s = self.settings
        # how a dim is made dynamic (mark_dynamic, maybe_mark_dynamic, dynamic=True) is one class;
        # unbacked symbols are another; dynamic=False (everything static) a third
        marks = joined(["dynamic"] * (s.dynamic is True) + ["static"] * (s.dynamic is False) + [
            "unbacked" if m == "unbacked" else "dynamic" for x in self.inputs for m in x.marks if m != "static"])
        return {"needs": " > ".join(op_kind(c) for c in self.ops) or "-", "marks": marks,
                "layout": joined(x.layout for x in self.inputs if x.layout != "contiguous"),
                "dtype": joined(dtype_class(x.dtype) for x in self.inputs),
                "values": "scaled" if any(x.scale != 1.0 for x in self.inputs) else "-",
                "mode": s.mode or "-",
                "flags": ", ".join(f"{k}={v!r}" for k, v in sorted((s.options or {}).items())) or "-"}

    def sizes_at(self, call: int) -> dict:
        return {k: v[call] for k, v in self.sizes.items()}

    def concrete_shape(self, inp: TensorInput, call: int) -> list[int]:
        return [d if isinstance(d, int) else self.sizes[d][call] for d in inp.shape]

    @staticmethod
    def from_dict(d: Any) -> "Program":
        return _program_from_dict(d)


def op_kind(c: OpCall) -> str:
    """What a minimal signature names of one op: its family, with its params
    that are names or flags ("pad(mode=reflect)"; a dtype as its class)."""
    from fuzz.program.opdb import OPS  # lazy: the op database pulls in hypothesis

    fam = OPS[c.op].family if c.op in OPS else f"?{c.op}"
    cats = [f"{k}={dtype_class(v) or v if k == 'to' else v}" for k, v in sorted(c.params.items())
            if isinstance(v, str) or v is True]
    return fam + (f"({','.join(cats)})" if cats else "")


def _need(d: dict, key: str, typ, where: str):
    if key not in d:
        raise ProgramError(f"{where}: missing field {key!r}")
    v = d[key]
    if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
        raise ProgramError(f"{where}: field {key!r} must be {getattr(typ, '__name__', typ)}, got {type(v).__name__}")
    return v


# What the other files of a corpus entry hold, to name one given in place of a program.
_NOT_A_PROGRAM = {"outcome": "a verdict (verdict.json)", "hits": "an entry's meta.json",
                  "torch": "an entry's env.json", "key": "a signature (signature.json)", "rows": "an ablation.json"}


def _optional(d: dict, key: str, ok, want: str, where: str) -> None:
    if key in d and not ok(d[key]):
        raise ProgramError(f"{where}: field {key!r} must be {want}, got {d[key]!r}"[:300])


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _program_from_dict(d: Any) -> Program:
    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    if "schema" not in d:
        what = next((w for k, w in _NOT_A_PROGRAM.items() if k in d), None)
        raise ProgramError(f"not a program: this is {what}; give the entry's program.json" if what else
                           "not a program: no 'schema' field (a program has schema, sizes, inputs, ops, outputs)")
    schema = d.get("schema")
    if schema != SCHEMA_VERSION:
        raise ProgramError(f"schema version {schema!r} is not supported (this shapefuzz reads {SCHEMA_VERSION})")
    sizes = _need(d, "sizes", dict, "program")
    for k, v in sizes.items():
        if not isinstance(v, list) or not v or not all(_is_int(x) and x >= 0 for x in v):
            raise ProgramError(f"sizes[{k!r}] must be a non-empty list of non-negative ints")
    if len({len(v) for v in sizes.values()}) > 1:
        raise ProgramError("every size symbol needs one value per call of the schedule")
    if sizes and len(next(iter(sizes.values()))) > MAX_CALLS:
        raise ProgramError(f"the size schedule has {len(next(iter(sizes.values())))} calls, over the limit of "
                           f"{MAX_CALLS}")
    known_inputs = {f.name for f in TensorInput.__dataclass_fields__.values()}
    inputs = []
    for i, x in enumerate(_need(d, "inputs", list, "program")):
        where = f"inputs[{i}]"
        if not isinstance(x, dict):
            raise ProgramError(f"{where} must be an object")
        extra = set(x) - known_inputs
        if extra:
            raise ProgramError(f"{where}: unknown fields {sorted(extra)}")
        _need(x, "name", str, where)
        _need(x, "shape", list, where)
        _optional(x, "dtype", lambda v: isinstance(v, str), "a dtype name", where)
        _optional(x, "layout", lambda v: isinstance(v, str), "a layout name", where)
        _optional(x, "layout_dim", _is_int, "an int", where)
        _optional(x, "scale", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
                  and abs(v) < float("inf") and v == v, "a finite number", where)
        _optional(x, "marks", lambda v: isinstance(v, list) and all(isinstance(m, str) for m in v),
                  "a list of marks", where)
        inputs.append(TensorInput(**x))
    ops = []
    for i, o in enumerate(_need(d, "ops", list, "program")):
        if not isinstance(o, dict):
            raise ProgramError(f"ops[{i}] must be an object")
        args = _need(o, "args", list, f"ops[{i}]")
        if not all(isinstance(a, str) for a in args):
            raise ProgramError(f"ops[{i}]: args must be value names (strings)")
        ops.append(OpCall(op=_need(o, "op", str, f"ops[{i}]"), args=args,
                          params=_need(o, "params", dict, f"ops[{i}]"), out=_need(o, "out", str, f"ops[{i}]")))
    outputs = _need(d, "outputs", list, "program")
    if not all(isinstance(o, str) for o in outputs):
        raise ProgramError("outputs must be value names (strings)")
    settings = d.get("settings", {})
    if not isinstance(settings, dict):
        raise ProgramError("settings must be an object")
    extra = set(settings) - {f for f in RunSettings.__dataclass_fields__}
    if extra:
        raise ProgramError(f"settings: unknown fields {sorted(extra)}")
    _check_settings(settings)
    seed = d.get("seed", 0)
    if not _is_int(seed):
        raise ProgramError("seed must be an int")
    return Program(sizes=sizes, inputs=inputs, ops=ops, outputs=outputs, settings=RunSettings(**settings), seed=seed,
                   schema=schema)


def _check_settings(s: dict) -> None:
    from fuzz.devices import DeviceError, parse

    _optional(s, "backend", lambda v: isinstance(v, str) and v, "a backend name", "settings")
    _optional(s, "device", lambda v: isinstance(v, str), "a device string", "settings")
    _optional(s, "dynamic", lambda v: v in DYNAMIC_FLAGS and not _is_int(v), "null, true or false", "settings")
    _optional(s, "mode", lambda v: v is None or isinstance(v, str), "null or a torch.compile mode", "settings")
    _optional(s, "options", lambda v: isinstance(v, dict), "an object of Inductor options", "settings")
    if "device" in s:
        try:
            parse(s["device"])
        except DeviceError as e:
            raise ProgramError(f"settings: {e}") from None
