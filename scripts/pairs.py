"""Pairwise coverage of generated programs: which
conjunctions of a value's feature and the op that consumes it the programs
hold, out of those the type checker accepts in some program. The axes (what
a pair is) are fuzz/program/pairs.py's, shared with the pair-aimed generator
(strategies/aim.py).

Feasibility: a pair is feasible when the type checker accepts some program
with it. A pair some drawn program holds is feasible (every drawn program type
checks); any other pair is searched for: small programs whose input or first
op gives a value with the feature (a few shapes of rank 0-5, each dtype the
consumer takes), the consumer applied to it (as its first operand, else its
second), its other operands fresh inputs as the generator makes them and its
params drawn from the op's own strategy, a few times; the first that type
checks is the witness. The search runs on the pairs the programs hold too:
the share it finds of those (search_recall) estimates how many feasible
pairs it misses. backward:True needs an op eager can differentiate
(OpSpec.grad), as the generator does. A pair no search finds is counted
infeasible, so the share is of the pairs known feasible: a witness the search
misses makes it an overestimate. Answers are cached in memory, and in a JSON
file with --cache.
"""

from __future__ import annotations

import random
import zlib

from fuzz.program import dtypes as D
from fuzz.program.ir import OpCall, Program, ProgramError, RunSettings, TensorInput
from fuzz.program.layouts import LAYOUT_TABLE, view_shape
from fuzz.program.opdb import OPS
from fuzz.program.pairs import (  # noqa: F401 - the axes, read here by scripts/reach.py and the tests
    CLASSES, DTYPE_CLASS, consumers, feature_names, pairs_of, setting_features, universe, value_features)
from fuzz.program.typecheck import typecheck

# -- feasibility ----------------------------------------------------------------------------

SIZES = {"s0": [3, 6, 9], "s1": [4, 5, 8]}
# Shapes the witnesses try, simplest first: the ranks the op families take (matrix 2-3, nn 3-5, resample 3-5).
# A literal 1 (squeeze, expand), channels a square divides (pixel_shuffle).
SHAPES = (["s0", "s1"], ["s0"], [2, "s0", "s1"], [2, 3, "s0", "s1"], [2, 3, 2, "s0", "s1"], [], ["s1", 4],
          [3, "s0"], [4], [2, 3], ["s0", 1], [1, "s0"], [2, 1, "s0"], [1, 4, "s0", "s1"], [2, 8, "s0", "s1"])
DTYPES = ("float32", "int64", "bool", "float16", "uint8", "float64", "bfloat16", "int32", "int8", "int16")
assert set(DTYPES) == set(DTYPE_CLASS) == set(D.ALL), "a dtype this file does not class"
PRODUCED = 4  # witness values of a producer family per input shape and dtype, at most
DRAWS = 4  # param draws per witness value
WITNESSES = 6  # witness values a pair's search draws params for, at most


def _input(name: str, shape, dtype: str, layout: str = "contiguous", **kw) -> TensorInput:
    x = TensorInput(name=name, shape=list(shape), dtype=dtype, layout=layout, **kw)
    if layout == "permuted":
        x.perm = list(range(len(shape)))[::-1]
    return x


def _drawer():
    """draw(strategy, seed) -> a value drawn outside a test (Hypothesis internals: a script's need only)."""
    from hypothesis.control import BuildContext
    from hypothesis.internal.conjecture.data import ConjectureData

    def draw(strategy, k: int):
        data = ConjectureData(random=random.Random(k))
        with BuildContext(data, is_final=False, wrapped_test=None):
            return data.draw(strategy)
    return draw


class Feasibility:
    """Whether a pair is feasible, each answer searched once (module docstring)."""

    def __init__(self, backend: str = "inductor", device: str = "cpu", cache: dict | None = None):
        self.backend, self.device = backend, device
        self.answers: dict = cache if cache is not None else {}  # "feature|consumer" -> bool
        self._draw = _drawer()
        from fuzz.devices import device_type

        self.device_type = device_type(device)
        self._made: dict = {}  # feature -> its witnesses (_witnesses)

    def settings(self) -> RunSettings:
        return RunSettings(backend=self.backend, device=self.device)

    def feasible(self, feature: str, consumer: str) -> bool:
        key = f"{feature}|{consumer}"
        if key not in self.answers:
            self.answers[key] = self._search(feature, consumer)
        return self.answers[key]

    def _search(self, feature: str, consumer: str) -> bool:
        if consumer.startswith("family:"):  # the family grain: some op of the family
            ops = [o.name for o in OPS.family(consumer.partition(":")[2]) if o.runs_on(self.device_type)]
            return any(self.feasible(feature, o) for o in ops)
        spec = OPS[consumer]
        axis, _, value = feature.partition(":")
        if axis in ("backward", "fullgraph", "mode"):
            if axis == "backward" and value == "True" and not spec.grad:
                return False
            return any(self.feasible(f"dtype:{c}", consumer) for c in CLASSES)
        tried = 0
        for prefix, info, name in self._witnesses(axis, value):
            for first in (True, False):
                if first and info[name].dtype not in spec.dtypes:
                    continue
                made = self._apply(prefix, info, name, spec, first)
                if made is None:
                    continue
                if made:
                    return True
                tried += 1
                if tried >= WITNESSES:
                    return False
        return False

    def _witnesses(self, axis: str, value: str) -> list:
        """(program, its ValueInfos, value name): programs whose value has the feature, simplest first (made
        once per feature)."""
        key = f"{axis}:{value}"
        if key not in self._made:
            made = []
            gen = self._produced(value) if axis == "producer" else (
                self._input_witness(axis, value, shape, dt) for dt in DTYPES for shape in SHAPES)
            for got in gen:
                if got is None:
                    continue
                try:
                    made.append((got[0], typecheck(got[0]), got[1]))
                except ProgramError:
                    continue
            self._made[key] = made
        return self._made[key]

    def _program(self, inputs, ops=(), outputs=None) -> Program:
        ops = list(ops)
        return Program(sizes=dict(SIZES), inputs=inputs, ops=ops,
                       outputs=outputs or [ops[-1].out if ops else inputs[-1].name], settings=self.settings())

    def _input_witness(self, axis, value, shape, dt):
        if axis == "dtype" and DTYPE_CLASS[dt] != value:
            return None
        if axis in ("layout", "offset", "dtype", "mark"):
            kw = {}
            layout = value if axis == "layout" else "offset" if axis == "offset" else "contiguous"
            if axis == "offset":
                kw["offset"] = int(value)
            if axis == "mark":
                kw["marks"] = [value] * len(shape)
            x = _input("x0", shape, dt, layout, **kw)
            if LAYOUT_TABLE[layout].needs(x):
                return None
            return self._program([x]), "x0"
        if axis == "alias":
            base = _input("x0", shape, dt, "offset" if value == "before" else "contiguous")
            view = {"flips": "same", "base": "same"}.get(value, value)
            alias = {"of": "x0", "view": view}
            if view == "narrow":
                alias.update(dim=0, start=0, length=1)
            if view == "before":
                alias["length"] = 2
            if value == "flips":
                alias["calls"] = [True, False, True]
            vs = view_shape(alias, base)
            if vs is None:
                return None
            x1 = _input("x1", vs, dt, alias=alias)
            return self._program([base, x1]), "x0" if value == "base" else "x1"
        return None

    def _produced(self, family: str):
        """Programs whose last value an op of `family` made, over each dtype and shape, each op in turn."""
        specs = [o for o in OPS.family(family) if o.runs_on(self.device_type)]
        for dt in DTYPES:
            for k, shape in enumerate(SHAPES):
                prefix = self._program([_input("x0", shape, dt)])
                info = typecheck(prefix)
                n = 0
                for spec in specs[k % len(specs):] + specs[:k % len(specs)]:  # each shape starts at another op
                    made = self._apply(prefix, info, "x0", spec, True, keep=True)
                    if made:
                        yield made, made.ops[-1].out
                        n += 1
                        if n >= PRODUCED:
                            break

    def _apply(self, prefix: Program, info: dict, name: str, spec, first: bool, keep: bool = False):
        """spec applied to value `name` of prefix (as its first operand, else its second after a plain
        input like it): the program when keep, else whether some draw type checks; None when the op cannot
        take the value there at all."""
        a = info[name]
        values = list(info.values())
        inputs = list(prefix.inputs)
        if first:
            if not spec.applicable(a, values):
                return None
            names, args = [name], [a]
        else:
            if spec.arity < 2:
                return None
            if not all(d.is_literal or d.is_symbol for d in a.shape):  # an input cannot have a derived size
                return None
            lead = _input(f"x{len(inputs)}", [d.const if d.is_literal else d.base for d in a.shape], a.dtype)
            inputs.append(lead)
            lead_info = typecheck(self._program(inputs))[lead.name]
            if not spec.applicable(lead_info, values + [lead_info]) or not spec.fits([lead_info], a):
                return None
            names, args = [lead.name, name], [lead_info, a]
        while len(names) < spec.arity:
            fresh = spec.fresh_info(args)
            if fresh is None:
                cands = [n for n, v in info.items() if spec.fits(args, v)]
                if not cands:
                    return None
                names.append(cands[0])
                args.append(info[cands[0]])
                continue
            shape = [d.const if d.is_literal else d.base for d in spec.operand(args)]
            x = _input(f"x{len(inputs)}", shape, args[0].dtype)
            inputs.append(x)
            names.append(x.name)
            args.append(fresh)
        out = f"v{len(prefix.ops)}"
        # seeds of the op and the program: other params for each witness, the same whatever the order of searches
        at = zlib.crc32(f"{spec.name} {names} {prefix.to_dict()}".encode()) * DRAWS
        for k in range(DRAWS):
            try:
                params = self._draw(spec.params(args), at + k)
            except Exception:  # noqa: BLE001 - a draw the strategy rejects (assume, overrun): try another
                continue
            p = self._program(inputs, list(prefix.ops) + [OpCall(op=spec.name, args=list(names), params=params,
                                                                  out=out)])
            try:
                typecheck(p)
            except ProgramError:
                continue
            return p if keep else True
        return False


def coverage(programs: list, feasibility: Feasibility, device_type: str = "cpu", modes=(None,)) -> dict:
    """grain -> {"seen", "feasible", "share", "missing", "search_recall", "search_missed"}: the feasible pairs
    the programs hold, and the feasible ones they miss. A pair they hold is feasible (every drawn program type
    checks); the search runs on those too, and the share of them it finds (search_recall; search_missed, those
    it did not) tells how many feasible pairs it may miss."""
    seen = {"op": set(), "family": set()}
    for p in programs:
        for grain, pairs in pairs_of(p).items():
            seen[grain] |= pairs
    out = {}
    for grain, pairs in universe(device_type, modes).items():
        held = seen[grain] & pairs
        found = {pq for pq in sorted(pairs) if feasibility.feasible(*pq)}
        missing = sorted(found - held)
        feasible = len(held) + len(missing)
        out[grain] = {"seen": len(held), "feasible": feasible,
                      "share": round(len(held) / feasible, 4) if feasible else None, "missing": missing,
                      "search_recall": round(len(held & found) / len(held), 4) if held else None,
                      "search_missed": sorted(held - found)}
    return out
