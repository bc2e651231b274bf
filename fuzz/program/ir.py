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
        from fuzz.datafile import DataFileError, loads

        try:
            d = loads(text)  # duplicate keys refused
        except DataFileError as e:
            raise ProgramError(str(e)) from None
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


# What the other files of a corpus entry hold, to name one given in place of a program.
_NOT_A_PROGRAM = {"outcome": "a verdict (verdict.json)", "hits": "an entry's meta.json",
                  "torch": "an entry's env.json", "key": "a signature (signature.json)", "rows": "an ablation.json"}


def _program_from_dict(d: Any) -> Program:
    from fuzz.program.schema import bad_name, violation

    def check_name(name: str, where: str) -> None:
        if bad_name(name):
            raise ProgramError(f"{where}: {bad_name(name)}")

    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    if "schema" not in d:
        what = next((w for k, w in _NOT_A_PROGRAM.items() if k in d), None)
        raise ProgramError(f"not a program: this is {what}; give the entry's program.json" if what else
                           "not a program: no 'schema' field (a program has schema, sizes, inputs, ops, outputs)")
    schema = d.get("schema")
    if schema != SCHEMA_VERSION:
        raise ProgramError(f"schema version {schema!r} is not supported (this shapefuzz reads {SCHEMA_VERSION})")
    why = violation(d, "compiled_program")  # every field's type and range (fuzz/program/schema.json)
    if why:
        raise ProgramError(why)
    sizes = d["sizes"]
    for k in sizes:
        check_name(k, f"sizes[{k!r}]")
    if len({len(v) for v in sizes.values()}) > 1:
        raise ProgramError("every size symbol needs one value per call of the schedule")
    inputs = []
    for i, x in enumerate(d["inputs"]):
        check_name(x["name"], f"inputs[{i}].name")
        for dim, bounds in x.get("mark_range", {}).items():
            where = f'inputs[{i}].mark_range["{dim}"]'
            if int(dim) >= len(x["shape"]):
                raise ProgramError(f"{where}: dim {dim} is past the input's rank {len(x['shape'])}")
            if bounds[0] > bounds[1]:
                raise ProgramError(f"{where}: min {bounds[0]} is above max {bounds[1]}")
            size, marks = x["shape"][int(dim)], x.get("marks") or []
            values = sizes.get(size, []) if isinstance(size, str) else [size]
            used = int(dim) < len(marks) and marks[int(dim)] == "dynamic"  # codegen passes it to mark_dynamic
            if used and any(not bounds[0] <= v <= bounds[1] for v in values):  # mark_dynamic would refuse the call
                raise ProgramError(f"{where}: the schedule's sizes {values} of that dim leave [{bounds[0]}, "
                                   f"{bounds[1]}]")
        inputs.append(TensorInput(**x))
    ops = []
    for i, o in enumerate(d["ops"]):
        check_name(o["out"], f"ops[{i}].out")
        ops.append(OpCall(op=o["op"], args=o["args"], params=o["params"], out=o["out"]))
    return Program(sizes=sizes, inputs=inputs, ops=ops, outputs=d["outputs"],
                   settings=RunSettings(**d.get("settings", {})), seed=d.get("seed", 0), schema=schema)
