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

LAYOUTS = ("contiguous", "transposed", "offset", "expanded")
MARKS = ("static", "dynamic", "maybe_dynamic", "unbacked")
DYNAMIC_FLAGS = (None, True, False)

# The op the shrinker puts in place of any op a bug does not need (an identity
# for finite values, on every dtype and rank): a minimal program that still
# holds it needs "some op" there, not that one. Its family is what a value
# signature then names (tests/test_signature.py checks it against the op database).
NEUTRAL_OP = "nan_to_num"
NEUTRAL_FAMILY = "pointwise"


def dtype_class(dt: str) -> str:
    """The class of a dtype a minimal signature names: float32 is the default ("")."""
    return {"bool": "bool", "int32": "int", "int64": "int", "float16": "half", "bfloat16": "half",
            "float64": "double", "float32": ""}.get(dt, dt)


class ProgramError(ValueError):
    """A program (or its JSON) is malformed, of another schema, or invalid."""


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
    layout: str = "contiguous"  # transposed: storage has the last two dims swapped
    layout_dim: int = 0  # expanded: the dim that has stride 0
    scale: float = 1.0  # values drawn ~ N(0, scale) for floats, ints in [-8, 8]
    marks: list = field(default_factory=list)  # per dim, one of MARKS


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


def _program_from_dict(d: Any) -> Program:
    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    schema = d.get("schema")
    if schema != SCHEMA_VERSION:
        raise ProgramError(f"schema version {schema!r} is not supported (this shapefuzz reads {SCHEMA_VERSION})")
    sizes = _need(d, "sizes", dict, "program")
    for k, v in sizes.items():
        if not isinstance(v, list) or not v or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
            raise ProgramError(f"sizes[{k!r}] must be a non-empty list of non-negative ints")
    if len({len(v) for v in sizes.values()}) > 1:
        raise ProgramError("every size symbol needs one value per call of the schedule")
    known_inputs = {f.name for f in TensorInput.__dataclass_fields__.values()}
    inputs = []
    for i, x in enumerate(_need(d, "inputs", list, "program")):
        if not isinstance(x, dict):
            raise ProgramError(f"inputs[{i}] must be an object")
        extra = set(x) - known_inputs
        if extra:
            raise ProgramError(f"inputs[{i}]: unknown fields {sorted(extra)}")
        _need(x, "name", str, f"inputs[{i}]")
        _need(x, "shape", list, f"inputs[{i}]")
        inputs.append(TensorInput(**x))
    ops = []
    for i, o in enumerate(_need(d, "ops", list, "program")):
        if not isinstance(o, dict):
            raise ProgramError(f"ops[{i}] must be an object")
        ops.append(OpCall(op=_need(o, "op", str, f"ops[{i}]"), args=_need(o, "args", list, f"ops[{i}]"),
                          params=_need(o, "params", dict, f"ops[{i}]"), out=_need(o, "out", str, f"ops[{i}]")))
    settings = d.get("settings", {})
    if not isinstance(settings, dict):
        raise ProgramError("settings must be an object")
    extra = set(settings) - {f for f in RunSettings.__dataclass_fields__}
    if extra:
        raise ProgramError(f"settings: unknown fields {sorted(extra)}")
    seed = d.get("seed", 0)
    if not isinstance(seed, int):
        raise ProgramError("seed must be an int")
    return Program(sizes=sizes, inputs=inputs, ops=ops, outputs=_need(d, "outputs", list, "program"),
                   settings=RunSettings(**settings), seed=seed, schema=schema)
