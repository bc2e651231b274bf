"""Step programs: straight-line lazy-tensor code with sync points, for torch_xla.

A StepProgram is a list of blocks; a block is a list of steps run `repeat`
times (a Python for loop in the generated code), so graphs recur and the
compilation cache is hit. A block may bind size symbols (n0, n1, ...) with one
value per repetition, so the same code also runs at changed sizes. Tensors are
named t0, t1, ...; a name bound inside a block stays bound after it.

Every op is declared once in OPS (kind, tensor arity, params, how to print it);
the validator, the code generator and the strategies all read that table.
Nothing here imports torch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from fuzz.program.ir import JsonForm, ProgramError, dtype_class, limit_error

SCHEMA_VERSION = 1
# One dtype per program keeps promotion out of the way: these bugs are about
# aliasing and caching, not type rules. int64 first: the seed's dtype.
DTYPES = ("int64", "float32", "int32", "float16", "bfloat16")
SYNC_HOW = ("sync", "mark_step")  # torch_xla.sync() / xm.mark_step()
OBSERVE_HOW = ("cpu", "item")  # t.cpu() / t.item()
TENSOR_NAME = re.compile(r"t\d+\Z")
SYMBOL_NAME = re.compile(r"n\d+\Z")
MAX_REPEAT = 64


# -- the op table ------------------------------------------------------------

def _num(v) -> str:
    return repr(v)


def _shape(s) -> str:
    items = [str(d) for d in s]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _index(p: dict) -> str:
    """The subscript of a slice on dim p["dim"]: `:, 1:3:2`."""
    step = p.get("step", 1)
    sl = f"{p['start']}:{p['stop']}" + (f":{step}" if step != 1 else "")
    return ", ".join([":"] * p["dim"] + [sl])


def _other(args, p) -> str:
    """The second operand: a tensor name or the scalar params["other"]."""
    return args[1] if len(args) > 1 else _num(p["other"])


@dataclass(frozen=True)
class StepOp:
    name: str
    # create | pointwise | inplace | setitem | view | sync | observe | donate
    kind: str
    arity: tuple  # (min, max) tensor args; args[0] is the target of a write
    params: dict  # name -> (type tag, required); tags in _PARAM_CHECKS
    render: Callable[[list, dict], str] | None  # -> expression, or statement for writes
    scalar_other: bool = False  # one tensor arg plus params["other"] stands for two
    label: str = ""  # what a report calls it where its name is the harness's ("observe": a read back to the host)

    @property
    def binds(self) -> bool:
        """Whether the step binds `out` (else it writes args[0] or has effects)."""
        return self.kind in ("create", "pointwise", "view")

    @property
    def writes(self) -> bool:
        return self.kind in ("inplace", "setitem")


_SL = {"dim": ("int", True), "start": ("int", True), "stop": ("int", True), "step": ("pos", False)}
_OTHER = {"other": ("num", False)}


def _ops(*specs: StepOp) -> dict:
    return {s.name: s for s in specs}


OPS: dict[str, StepOp] = _ops(
    # creations: host data moved to the device, or a fill on the device
    StepOp("tensor", "create", (0, 0), {"data": ("data", True)},
           lambda a, p: f"torch.tensor({json.dumps(p['data'])}, dtype=dt, device=dev)", label="torch.tensor"),
    StepOp("rand", "create", (0, 0), {"shape": ("shape", True), "seed": ("pos0", True)},
           lambda a, p: f"rand({_shape(p['shape'])}, {p['seed']}, dt, dev)", label="torch.randn"),
    StepOp("full", "create", (0, 0), {"shape": ("shape", True), "value": ("num", True)},
           lambda a, p: f"torch.full({_shape(p['shape'])}, {_num(p['value'])}, dtype=dt, device=dev)",
           label="torch.full"),
    # out-of-place
    StepOp("add", "pointwise", (1, 2), _OTHER, lambda a, p: f"{a[0]} + {_other(a, p)}", True),
    StepOp("sub", "pointwise", (1, 2), _OTHER, lambda a, p: f"{a[0]} - {_other(a, p)}", True),
    StepOp("mul", "pointwise", (1, 2), _OTHER, lambda a, p: f"{a[0]} * {_other(a, p)}", True),
    StepOp("maximum", "pointwise", (2, 2), {}, lambda a, p: f"torch.maximum({a[0]}, {a[1]})"),
    StepOp("minimum", "pointwise", (2, 2), {}, lambda a, p: f"torch.minimum({a[0]}, {a[1]})"),
    StepOp("neg", "pointwise", (1, 1), {}, lambda a, p: f"-{a[0]}"),
    StepOp("abs", "pointwise", (1, 1), {}, lambda a, p: f"{a[0]}.abs()"),
    StepOp("clone", "pointwise", (1, 1), {}, lambda a, p: f"{a[0]}.clone()"),
    # in-place on args[0] (which may be a view)
    StepOp("add_", "inplace", (1, 2), _OTHER, lambda a, p: f"{a[0]}.add_({_other(a, p)})", True),
    StepOp("sub_", "inplace", (1, 2), _OTHER, lambda a, p: f"{a[0]}.sub_({_other(a, p)})", True),
    StepOp("mul_", "inplace", (1, 2), _OTHER, lambda a, p: f"{a[0]}.mul_({_other(a, p)})", True),
    StepOp("copy_", "inplace", (2, 2), {}, lambda a, p: f"{a[0]}.copy_({a[1]})"),
    StepOp("fill_", "inplace", (1, 1), {"other": ("num", True)}, lambda a, p: f"{a[0]}.fill_({_num(p['other'])})"),
    StepOp("zero_", "inplace", (1, 1), {}, lambda a, p: f"{a[0]}.zero_()"),
    StepOp("neg_", "inplace", (1, 1), {}, lambda a, p: f"{a[0]}.neg_()"),
    StepOp("abs_", "inplace", (1, 1), {}, lambda a, p: f"{a[0]}.abs_()"),
    # slice assignment: t[..., start:stop:step] = tensor or scalar
    StepOp("setitem", "setitem", (1, 2), {**_SL, **_OTHER},
           lambda a, p: f"{a[0]}[{_index(p)}] = {_other(a, p)}", True, label="slice assignment"),
    # views: alias args[0]'s storage; expand is read-only
    StepOp("slice", "view", (1, 1), _SL, lambda a, p: f"{a[0]}[{_index(p)}]"),
    StepOp("select", "view", (1, 1), {"dim": ("int", True), "index": ("int", True)},
           lambda a, p: f"{a[0]}.select({p['dim']}, {p['index']})"),
    StepOp("transpose", "view", (1, 1), {"dim0": ("int", True), "dim1": ("int", True)},
           lambda a, p: f"{a[0]}.transpose({p['dim0']}, {p['dim1']})"),
    StepOp("unsqueeze", "view", (1, 1), {"dim": ("int", True)}, lambda a, p: f"{a[0]}.unsqueeze({p['dim']})"),
    StepOp("expand", "view", (1, 1), {"shape": ("shape", True)},
           lambda a, p: f"{a[0]}.expand({_shape(p['shape'])})"),
    StepOp("detach", "view", (1, 1), {}, lambda a, p: f"{a[0]}.detach()"),
    # sizes and strides over args[0]'s storage, from its start plus `offset`; without `offset`, from args[0]'s
    # own storage offset (eager's implicit one: a select's start past element 0)
    StepOp("as_strided", "view", (1, 1), {"size": ("shape", True), "stride": ("strides", True),
                                          "offset": ("pos0", False)},
           lambda a, p: f"{a[0]}.as_strided({_shape(p['size'])}, {_shape(p['stride'])}"
                        + (f", {p['offset']})" if "offset" in p else ")")),
    # effects: a graph boundary, reads back to the host, explicit buffer donation
    StepOp("sync", "sync", (0, 0), {"how": ("sync_how", False)},
           lambda a, p: "mark_step()" if p.get("how") == "mark_step" else "sync()", label="torch_xla.sync"),
    # observe: rendered by codegen, which labels each read with its repetition
    StepOp("observe", "observe", (1, 8), {"how": ("observe_how", False)}, None, label="Tensor.cpu"),
    StepOp("donate", "donate", (1, 1), {}, lambda a, p: f"donate({a[0]})", label="buffer donation"),
)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and v == v and abs(v) != float("inf")


def _is_data(v) -> bool:
    return _is_num(v) or (isinstance(v, list) and all(_is_data(x) for x in v))


def _is_shape(v) -> bool:
    return isinstance(v, list) and all(
        (isinstance(d, int) and not isinstance(d, bool) and d >= 0) or (isinstance(d, str) and SYMBOL_NAME.match(d))
        for d in v)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_PARAM_CHECKS = {
    "int": _is_int,
    "pos": lambda v: _is_int(v) and v >= 1,
    "pos0": lambda v: _is_int(v) and v >= 0,
    "num": _is_num,
    "data": _is_data,
    "shape": _is_shape,
    "strides": lambda v: isinstance(v, list) and len(v) <= 8 and all(_is_int(x) and 0 <= x <= 1 << 24 for x in v),
    "sync_how": lambda v: v in SYNC_HOW,
    "observe_how": lambda v: v in OBSERVE_HOW,
}


# -- the program -------------------------------------------------------------

@dataclass
class Step:
    op: str
    args: list = field(default_factory=list)  # tensor names; args[0] is what a write writes
    params: dict = field(default_factory=dict)
    out: str = ""  # the name bound by create/pointwise/view steps


@dataclass
class Block:
    steps: list  # list[Step]
    repeat: int = 1
    sizes: dict = field(default_factory=dict)  # symbol -> one size per repetition


@dataclass
class XlaSettings:
    """Knobs that change how torch_xla traces, caches and aliases. The env ones
    are read at import, so a program that sets them runs in a fresh process."""
    param_aliasing: bool | None = None  # XLA_ENABLE_PARAM_ALIASING; None: torch_xla's default (on)
    functionalization: bool = True  # False: XLA_DISABLE_FUNCTIONALIZATION=1
    cache_size: int | None = None  # XLA_COMPILATION_CACHE_SIZE (entries); small ones evict
    donor_config: bool = False  # honour `donate` steps in sync graphs (set at run time)

    def env(self) -> dict:
        e = {}
        if self.param_aliasing is not None:
            e["XLA_ENABLE_PARAM_ALIASING"] = "1" if self.param_aliasing else "0"
        if not self.functionalization:
            e["XLA_DISABLE_FUNCTIONALIZATION"] = "1"
        if self.cache_size is not None:
            e["XLA_COMPILATION_CACHE_SIZE"] = str(self.cache_size)
        return e


@dataclass
class StepProgram(JsonForm):
    blocks: list  # list[Block]
    dtype: str = "int64"
    settings: XlaSettings = field(default_factory=XlaSettings)
    schema: int = SCHEMA_VERSION

    def op_classes(self) -> str:
        """The kinds of the ops that write, comma-joined: what a value finding's signature
        names (creations, syncs and reads are in every program)."""
        kinds = {OPS[s.op].kind if s.op in OPS else f"?{s.op}" for _, s in self.steps()}
        return ",".join(sorted(kinds - {"create", "sync", "observe"})) or "-"

    def device_type(self) -> str:
        return "xla"

    def minimal_parts(self) -> dict:
        """What a minimal signature names besides the outcome: the kinds of
        the steps in order (creations left out: every program has them), the
        dtype's class and the settings that are not the defaults."""
        kinds = [OPS[s.op].kind if s.op in OPS else f"?{s.op}" for _, s in self.steps()]
        default = XlaSettings()
        flags = [f"{k}={v!r}" for k, v in sorted(vars(self.settings).items()) if getattr(default, k) != v]
        return {"needs": " > ".join(k for k in kinds if k != "create") or "-",
                "dtype": dtype_class(self.dtype) or "-", "flags": ", ".join(flags) or "-"}

    def steps(self):
        """(block index, step) in program order, each block once."""
        for i, b in enumerate(self.blocks):
            for s in b.steps:
                yield i, s

    @staticmethod
    def from_dict(d: Any) -> "StepProgram":
        p = _from_dict(d)
        check(p)
        return p


def _fields(cls, d: Any, where: str) -> dict:
    if not isinstance(d, dict):
        raise ProgramError(f"{where} must be an object")
    extra = set(d) - set(cls.__dataclass_fields__)
    if extra:
        raise ProgramError(f"{where}: unknown fields {sorted(extra)}")
    return d


def _from_dict(d: Any) -> StepProgram:
    from fuzz.program.schema import violation

    _fields(StepProgram, d, "step program")
    if d.get("schema") != SCHEMA_VERSION:
        raise ProgramError(f"step-program schema {d.get('schema')!r} is not supported (this shapefuzz reads {SCHEMA_VERSION})")
    why = violation(d, "step_program")  # every field's type and range (fuzz/program/schema.json)
    if why:
        raise ProgramError(why)
    if not isinstance(d.get("blocks"), list):
        raise ProgramError("step program: 'blocks' must be a list")
    blocks = []
    for i, b in enumerate(d["blocks"]):
        _fields(Block, b, f"blocks[{i}]")
        if not isinstance(b.get("steps"), list):
            raise ProgramError(f"blocks[{i}]: 'steps' must be a list")
        steps = [Step(**_fields(Step, s, f"blocks[{i}].steps[{j}]")) for j, s in enumerate(b["steps"])]
        blocks.append(Block(steps=steps, repeat=b.get("repeat", 1), sizes=b.get("sizes", {})))
    settings = XlaSettings(**_fields(XlaSettings, d.get("settings", {}), "settings"))
    return StepProgram(blocks=blocks, dtype=d.get("dtype", "int64"), settings=settings, schema=d["schema"])


def check(p: StepProgram) -> None:
    """Raise ProgramError unless p is well formed: known ops and params, names
    bound before use, symbols used only in their block. Shape errors are left
    to eager, which calls such a program invalid."""
    if p.dtype not in DTYPES:
        raise ProgramError(f"dtype {p.dtype!r} is not one of {DTYPES}")
    s = p.settings
    if not all(isinstance(v, bool) or v is None for v in (s.param_aliasing,)) or not isinstance(s.functionalization, bool) \
            or not isinstance(s.donor_config, bool) or not (s.cache_size is None or (_is_int(s.cache_size) and s.cache_size >= 1)):
        raise ProgramError(f"settings: bad value in {s}")
    bound: set = set()
    for i, b in enumerate(p.blocks):
        where = f"blocks[{i}]"
        if not _is_int(b.repeat) or not 1 <= b.repeat <= MAX_REPEAT:
            raise ProgramError(f"{where}: repeat must be an int in 1..{MAX_REPEAT}")
        if not isinstance(b.sizes, dict):
            raise ProgramError(f"{where}: sizes must be an object")
        for sym, vals in b.sizes.items():
            if not SYMBOL_NAME.match(sym):
                raise ProgramError(f"{where}: size symbol {sym!r} must look like n0")
            if not isinstance(vals, list) or len(vals) != b.repeat or not all(_is_int(v) and v >= 0 for v in vals):
                raise ProgramError(f"{where}: sizes[{sym!r}] must list {b.repeat} non-negative ints")
        if not isinstance(b.steps, list) or not b.steps:
            raise ProgramError(f"{where}: a block needs at least one step")
        for j, st in enumerate(b.steps):
            _check_step(st, bound, b, f"{where}.steps[{j}]")


def _check_step(st: Step, bound: set, block: Block, where: str) -> None:
    symbols = set(block.sizes)
    spec = OPS.get(st.op) if isinstance(st.op, str) else None
    if spec is None:
        raise ProgramError(f"{where}: unknown op {st.op!r}")
    where += f" ({st.op})"
    if not isinstance(st.args, list) or not isinstance(st.params, dict) or not isinstance(st.out, str):
        raise ProgramError(f"{where}: args must be a list, params an object, out a string")
    lo, hi = spec.arity
    if not lo <= len(st.args) <= hi:
        raise ProgramError(f"{where}: takes {lo}..{hi} tensor args, got {len(st.args)}")
    for a in st.args:
        if not isinstance(a, str) or a not in bound:
            raise ProgramError(f"{where}: {a!r} is not a bound tensor name")
    extra = set(st.params) - set(spec.params)
    if extra:
        raise ProgramError(f"{where}: unknown params {sorted(extra)}")
    for name, (tag, required) in spec.params.items():
        if name not in st.params:
            if required:
                raise ProgramError(f"{where}: missing param {name!r}")
            continue
        if not _PARAM_CHECKS[tag](st.params[name]):
            raise ProgramError(f"{where}: param {name!r} has a bad value {st.params[name]!r}")
        if tag == "shape":
            shape = st.params[name]
            unknown = {d for d in shape if isinstance(d, str)} - symbols
            if unknown:
                raise ProgramError(f"{where}: size symbols {sorted(unknown)} are not bound by this block")
            reps = block.repeat if block.sizes else 1
            why = limit_error(f"{where}: param {name!r}",
                              lambda r: [block.sizes[d][r] if isinstance(d, str) else d for d in shape], reps)
            if why:
                raise ProgramError(why)
    if st.op == "as_strided" and _overlaps(st.params["size"], st.params["stride"]):
        raise ProgramError(f"{where}: the view's elements overlap; torch_xla has no overlapping tensors "
                           "(pytorch/xla#2964)")
    if spec.scalar_other and len(st.args) == 1 and "other" not in st.params:
        raise ProgramError(f"{where}: needs a second tensor or params['other']")
    if spec.scalar_other and len(st.args) == 2 and "other" in st.params:
        raise ProgramError(f"{where}: give a second tensor or params['other'], not both")
    if spec.binds:
        if not TENSOR_NAME.match(st.out):
            raise ProgramError(f"{where}: out {st.out!r} must look like t0")
        bound.add(st.out)
    elif st.out:
        raise ProgramError(f"{where}: this op binds no name, out must be empty")


def _overlaps(size: list, stride: list) -> bool:
    """Whether two elements of an as_strided view share a location: in stride order, each dim of more than
    one element must step past everything the smaller strides reach (fuzz/judge/loop.py's _overlapping,
    on a tensor: that module may import only torch, since repros embed it). Sizes that are symbols count
    as 2 (rejected conservatively); mismatched lengths are left to eager."""
    if len(size) != len(stride):
        return False
    dims = sorted((st_, 2 if isinstance(n, str) else n) for n, st_ in zip(size, stride)
                  if isinstance(n, str) or n > 1)
    reach = 0
    for st_, n in dims:
        if st_ <= reach:
            return True
        reach += st_ * (n - 1)
    return False


def concat(*programs: StepProgram) -> StepProgram:
    """One program that runs `programs` one after another, their tensors renamed
    apart: how a finding that needs an earlier case in the same process (a
    cache collision across cases) becomes one self-contained program. The
    settings are the first program's."""
    if not programs:
        raise ProgramError("concat needs at least one program")
    blocks, offset = [], 0
    for p in programs:
        check(p)
        names = {n for _, s in p.steps() for n in s.args + ([s.out] if s.out else [])}
        ren = {n: f"t{int(n[1:]) + offset}" for n in names}
        for b in p.blocks:
            blocks.append(Block(steps=[Step(s.op, [ren[a] for a in s.args], dict(s.params), ren.get(s.out, ""))
                                       for s in b.steps], repeat=b.repeat, sizes=dict(b.sizes)))
        offset += max((int(n[1:]) for n in names), default=-1) + 1
    q = StepProgram(blocks=blocks, dtype=programs[0].dtype, settings=programs[0].settings)
    check(q)
    return q
