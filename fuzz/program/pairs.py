"""The feature axes of pairwise coverage (real bugs sit where two features meet): which conjunctions of a
value's feature and the op that consumes it a program holds. One definition
for the measure (scripts/pairs.py, scripts/reach.py --pairs) and the
generator that aims at pairs (strategies/aim.py).

A pair is (feature, consumer): the consumer is an op, or an op family ("family:pad"); the
feature is one of the value the op reads (any operand), or a setting of its
program:
  layout:L, offset:N          the layout of an input read (offset: its storage offset)
  alias:VIEW, alias:flips,    an input that is a view of another input's storage
  alias:base                  (flips: aliased at some calls only), or that another input views
  mark:M                      a mark on a dim of an input read
  dtype:CLASS                 float, half, int, narrow-int or bool, of any value read
  producer:FAMILY             the family of the op that made the value read
  backward:B, fullgraph:B, mode:M   the program's settings
At the family grain the consumer is an op's family and, for producers, the
feature is the producer's family too (14 x 14 pairs); at the op grain the
consumer is the op (producer families x ops: producer op x consumer op, 171
x 171, is not counted)."""

from __future__ import annotations

from fuzz.program.ir import MARKS, Program
from fuzz.program.layouts import LAYOUTS, OFFSETS, VIEWS
from fuzz.program.opdb import OPS
from fuzz.program.opspec import FAMILIES

DTYPE_CLASS = {"float32": "float", "float64": "float", "float16": "half", "bfloat16": "half", "int32": "int",
               "int64": "int", "uint8": "narrow-int", "int8": "narrow-int", "int16": "narrow-int", "bool": "bool"}
CLASSES = ("float", "half", "int", "narrow-int", "bool")
SETTING_AXES = ("backward", "fullgraph", "mode")


def mode_name(m) -> str:
    return "default" if m is None else str(m)


def feature_names(modes=(None,)) -> list:
    """Every feature of a value or setting (the axes above), producers by family."""
    return ([f"layout:{x}" for x in LAYOUTS] + [f"offset:{n}" for n in OFFSETS]
            + [f"alias:{v}" for v in VIEWS] + ["alias:flips", "alias:base"] + [f"mark:{m}" for m in MARKS]
            + [f"dtype:{c}" for c in CLASSES] + [f"producer:{f}" for f in FAMILIES]
            + ["backward:True", "backward:False", "fullgraph:True", "fullgraph:False"]
            + [f"mode:{mode_name(m)}" for m in modes])


def consumers(device_type: str = "cpu") -> list:
    """The ops a program on this device type may hold."""
    return [o.name for o in OPS if o.runs_on(device_type)]


def universe(device_type: str = "cpu", modes=(None,)) -> dict:
    """grain ("op", "family") -> every pair of that grain."""
    feats = feature_names(modes)
    ops = consumers(device_type)
    fams = sorted({OPS[o].family for o in ops}, key=FAMILIES.index)
    return {"op": {(f, o) for f in feats for o in ops}, "family": {(f, f"family:{c}") for f in feats for c in fams}}


def value_features(p: Program, info: dict, name: str) -> list:
    """The features of value `name` (ValueInfos `info`, from typecheck), producers by family."""
    out = [f"dtype:{DTYPE_CLASS[info[name].dtype]}"]
    inputs = {x.name: x for x in p.inputs}
    x = inputs.get(name)
    if x is None:
        made = next(o for o in p.ops if o.out == name)
        return out + [f"producer:{OPS[made.op].family}"]
    out.append(f"layout:{x.layout}")
    if x.layout == "offset":
        out.append(f"offset:{x.offset}")
    if x.alias:
        out.append(f"alias:{x.alias.get('view')}")
        if x.alias.get("calls") is not None and not all(x.alias["calls"]):
            out.append("alias:flips")
    if any(y.alias and y.alias.get("of") == name for y in p.inputs):
        out.append("alias:base")
    out += [f"mark:{m}" for m in dict.fromkeys(x.marks)]
    return out


def setting_features(p: Program) -> list:
    s = p.settings
    return [f"backward:{bool(s.backward)}", f"fullgraph:{bool(s.fullgraph)}", f"mode:{mode_name(s.mode)}"]


def pairs_of(p: Program, info: dict | None = None) -> dict:
    """grain -> the pairs program p holds (see the module docstring)."""
    if info is None:
        from fuzz.program.typecheck import typecheck

        info = typecheck(p)
    by_op, by_family = set(), set()
    settings = setting_features(p)
    for o in p.ops:
        feats = set(settings)
        for a in o.args:
            feats.update(value_features(p, info, a))
        by_op.update((f, o.op) for f in feats)
        by_family.update((f, f"family:{OPS[o.op].family}") for f in feats)
    return {"op": by_op, "family": by_family}
