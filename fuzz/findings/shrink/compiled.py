"""Shrink passes for compiled Programs (torch.compile / Inductor / openxla).

The kind that the shrink engine (fuzz/findings/shrink/engine.py: cache,
cost-ordered fixpoint, budget, flakiness) runs for `shrink.shrink`. A
candidate is valid if it typechecks. The cost is a tuple of non-negative ints
compared lexicographically: ops, ops other than NEUTRAL_OP, inputs, total rank, calls, symbols, sizes,
attributes, params, outputs, names, JSON length; every candidate a pass
yields that does not lower it is skipped.

Passes (in order, each resumed at its position after an accepted step):

  ops        delta debugging over the op list: drop chunks (n/2, n/4, ..., 1),
             uses of a dropped op's result rewired to its first argument (its
             second, for a single binary op) where shapes allow, else the
             dependent ops dropped too; outputs are recomputed as the leaves
  neutral    replace an op by NEUTRAL_OP on its first argument (an op the bug
             does not need, only some op there: the minimal signature then
             names the neutral op's family, whatever op the program had); or
             by NEUTRAL_OP on a new input of its result's shape (the bug needs
             a value of that shape, not the op); or two ops by one
             NEUTRAL_BINARY reading both their first operands
  inputs     drop an unused input; merge an input into another value
  calls      keep only the failing call of the size schedule, else drop one call
  rank       drop a dim of an input (literal-1 dims first)
  symbols    merge one size symbol into another
  sizes      each size value (and literal dim) towards 1, 0, 2, 3, halving, -1, -2
  attrs      dtype -> float32 (of a whole alias group too), layout ->
             contiguous, an alias -> a view of its whole base, marks ->
             static / maybe_dynamic, scale -> 1.0
  params     each op param towards its simplest value: pad mode -> constant,
             fewer pad pairs, widths -> small ints (size-relative -> literal),
             constants -> 0 / 1, casts -> float32, ...
  settings   dynamic -> None, mode -> None, options one key at a time, seed -> 0
  names      rename values to x0.., v0.. (cosmetic; last)

Value outcomes (divergence, input mutation, ...) carry no message, so their
signature includes the set of op families of the program (fuzz/findings/signature.py).
Pinning the key therefore keeps one op per family of the original. With
`relax_families=True` a candidate also counts when its families are a
non-empty subset of the original's (everything else in the signature equal):
smaller programs, but the result may fall into a neighbouring bucket.

Hypothesis's own shrinker works on a choice sequence, and the public API
cannot turn a Program back into one (there is no way to seed `find` with a
known example). So Hypothesis runs only as an optional first stage
(`hypothesis_stage`): `hypothesis.find` over `strategies.programs`
restricted to the finding's op names, families, dtypes, input count, rank and
op count, with its own shrinker; a match there is a case the strategies could
have produced, and if it is smaller than the finding the IR passes continue
from it. It only pays off for bugs dense in that restricted space (every
example is a full evaluation), so it is off by default; the IR passes are what
reach minimal forms (they also do what Hypothesis cannot: rewire data flow,
merge inputs and symbols, drop dims, turn size-relative widths into literals).
"""

from __future__ import annotations

import copy
import json
import time
from typing import Iterator

from fuzz.findings.shrink.program_edits import (_alias_group, _drop_dim, _joins, _rename, _representatives, _substitutions,
                                         _tidy, _whole_view, off_representative, remove_ops)
from fuzz.program.ir import MARKS, NEUTRAL_OP, OpCall, Program, TensorInput
from fuzz.findings.shrink.engine import Engine, OutOfTime
from fuzz.judge.verdict import Verdict

_MARK_COST = {"static": 0, "maybe_dynamic": 1, "dynamic": 2, "unbacked": 3}
_MODE_COST = {"constant": 0, "replicate": 1, "reflect": 2, "circular": 3}


# -- measures ------------------------------------------------------------------

def canonical(p: Program) -> str:
    return json.dumps(p.to_dict(), sort_keys=True)


def max_rank(p: Program) -> int:
    return max((len(x.shape) for x in p.inputs), default=0)


def _size_cost(v: int) -> int:
    return {1: 0, 0: 1, 2: 2}.get(v, v)


def _value_cost(v) -> int:
    if v is None:
        return 0
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return min(abs(v) + (v < 0), 1000)
    if isinstance(v, float):
        if v == 0.0:
            return 0
        if v == 1.0:
            return 1
        if v != v or v in (float("inf"), float("-inf")):
            return 4
        return 2 + (v != int(v)) + (v < 0)
    if isinstance(v, str):
        if v in _MODE_COST:
            return _MODE_COST[v]
        return 0 if v == "float32" else 1
    if isinstance(v, (list, tuple)):
        return len(v) + sum(_value_cost(x) for x in v)
    if isinstance(v, dict):
        return 8 + sum(_value_cost(x) for x in v.values())
    return 1


# An aliasing input's view, simplest first: the shrinker moves an alias towards "same".
_VIEW_COST = {"same": 0, "view": 1, "transpose": 2, "narrow": 2, "before": 3}


# The dtype each dtype shrinks towards where float32 does not keep the bug: a dtype of one kind (integers,
# floats) that fails as its kind's plain member does is no part of the bug's trigger. Without this, one
# bug of every integer matmul was two rows, "an int8 input" and an int64 one.
_PLAIN_OF_KIND = {"int8": "int64", "int16": "int64", "int32": "int64", "uint8": "int64"}


def _dtype_cost(dt: str) -> int:
    """float32 0, a dtype its kind's plain member stands for 2 (so the move to that member is a step), else 1."""
    return 0 if dt == "float32" else 2 if dt in _PLAIN_OF_KIND else 1


def _input_cost(x: TensorInput) -> int:
    c = _dtype_cost(x.dtype) + 2 * (x.layout != "contiguous") + (x.layout_dim != 0) + (x.scale != 1.0)
    c += (x.offset != 3) + (x.step != 2) + bool(x.perm) + x.mark_negative + len(x.mark_range)
    c += (3 + _VIEW_COST.get(x.alias.get("view"), 3) + bool(x.alias.get("calls"))) if x.alias else 0
    return c + sum(_MARK_COST.get(m, 3) for m in x.marks) + (1 if x.marks else 0)


def _names_off(p: Program) -> int:
    n = sum(x.name != f"x{i}" for i, x in enumerate(p.inputs))
    return n + sum(c.out != f"v{i}" for i, c in enumerate(p.ops))


def cost(p: Program) -> tuple:
    """Lexicographic size of a program: every accepted step lowers it."""
    sizes = sum(_size_cost(v) for vals in p.sizes.values() for v in vals)
    sizes += sum(_size_cost(d) for x in p.inputs for d in x.shape if isinstance(d, int))
    s = p.settings
    attrs = sum(_input_cost(x) for x in p.inputs)
    attrs += (s.dynamic is not None) + (s.mode is not None) + len(s.options or {}) + (p.seed != 0)
    attrs += s.backward + s.fullgraph + len(s.dynamo or {})
    params = sum(_value_cost(c.params) for c in p.ops)
    return (len(p.ops), sum(c.op != NEUTRAL_OP for c in p.ops), off_representative(p), len(p.inputs),
            sum(len(x.shape) for x in p.inputs),
            p.calls, len(p.sizes), sizes, attrs, params, len(p.outputs), _names_off(p), len(canonical(p)))


# -- simpler values (the program edits live in program_edits.py) ---------------

def _smaller_sizes(v: int) -> list:
    out = []
    for c in (1, 0, 2, 3, v // 2, v // 2 - 1, v // 2 + 1, v - 1, v - 2):
        if 0 <= c and _size_cost(c) < _size_cost(v) and c not in out:
            out.append(c)
    return out


def _simpler(v, key: str = "") -> list:
    """Simpler values for one param value (typecheck weeds out the invalid)."""
    out: list = []
    if isinstance(v, bool):
        out = [False] if v else []
    elif isinstance(v, int):
        out = [0, 1, -1, v // 2, v - 1 if v > 0 else v + 1] + ([None] if key in ("start", "stop", "dim") else [])
    elif isinstance(v, float):
        out = [0.0, 1.0]
        if v == v and abs(v) != float("inf"):
            out += [float(int(v)), abs(v)]
        else:
            out += [10000.0, -1.0]
    elif isinstance(v, str):
        if v in _MODE_COST:
            out = ["constant", "replicate", "reflect"]
        elif key == "to":
            out = ["float32"]
    elif isinstance(v, dict) and set(v) == {"dim", "div", "add"}:
        nearer = v["add"] - 1 if v["add"] > 0 else v["add"] + 1
        out = [0, 1, 2, 3, 4, {**v, "add": 0}, {**v, "div": 1}, {**v, "add": nearer}]
    elif isinstance(v, list):
        if key == "pad":
            if len(v) > 2:
                out.append(v[:-2])
                out.append(v[2:])
            for i, w in enumerate(v):
                out += [v[:i] + [s] + v[i + 1:] for s in _simpler(w)]
        elif key in ("perm", "dims") and v != sorted(v):
            out.append(sorted(v))
        elif key == "dim":  # several reduction dims: fewer (never an empty list: torch reads () as all)
            out += [v[:i] + v[i + 1:] for i in range(len(v)) if len(v) > 2] + list(v)
        else:
            out += [v[:i] + v[i + 1:] for i in range(len(v)) if len(v) > 1]
            for i, w in enumerate(v):
                out += [v[:i] + [s] + v[i + 1:] for s in _simpler(w)]
    if v is not None and key in ("dim", "min", "max", "halve", "start", "stop"):
        out.append(None)
    res = []
    for c in out:
        if c is not None and type(c) is not type(v) and not (isinstance(v, dict) and isinstance(c, int)) \
                and not (isinstance(v, list) and key == "dim"):
            continue
        if c != v and _value_cost(c) < _value_cost(v) and c not in res:
            res.append(c)
    return res


# -- passes --------------------------------------------------------------------

def _pass_ops(p: Program) -> Iterator:
    n = len(p.ops)
    k = n // 2
    while k >= 2:
        for start in range(n - k, -1, -k):
            idx = set(range(start, start + k))
            yield f"drop ops {start}..{start + k - 1} (rewired)", remove_ops(p, idx, 0)
            yield f"drop ops {start}..{start + k - 1} and dependents", remove_ops(p, idx, None)
        k //= 2
    for i in reversed(range(n)):
        c = p.ops[i]
        yield f"drop op {i} {c.op} (uses read its input)", remove_ops(p, {i}, 0)
        if len(c.args) > 1:
            yield f"replace op {i} {c.op} by its second input", remove_ops(p, {i}, 1)
        yield f"drop op {i} {c.op} and dependents", remove_ops(p, {i}, None)


def _pass_neutral(p: Program) -> Iterator:
    for i, c in enumerate(p.ops):
        if c.op != NEUTRAL_OP:
            q = copy.deepcopy(p)
            q.ops[i] = OpCall(op=NEUTRAL_OP, args=[c.args[0]], params={}, out=c.out)
            yield f"op {i} {c.op} -> {NEUTRAL_OP}", q
    yield from _representatives(p)
    yield from _substitutions(p)
    yield from _joins(p)


def _pass_inputs(p: Program) -> Iterator:
    used = {a for c in p.ops for a in c.args} | set(p.outputs)
    for i in reversed(range(len(p.inputs))):
        x = p.inputs[i]
        if x.name not in used:
            q = copy.deepcopy(p)
            del q.inputs[i]
            yield f"drop unused input {x.name}", _tidy(q)
            continue
        # merge: every use of x reads another input, or the other operand of an op that reads x
        options = [y.name for y in p.inputs if y.name != x.name]
        for c in p.ops:
            if x.name in c.args:
                options += [a for a in c.args if a != x.name and a not in options]
        defined_at = {y.name: -1 for y in p.inputs} | {c.out: j for j, c in enumerate(p.ops)}
        first_use = min((j for j, c in enumerate(p.ops) if x.name in c.args), default=len(p.ops))
        for o in options:
            if defined_at.get(o, len(p.ops)) >= first_use:
                continue
            yield f"input {x.name} -> {o}", _merge_input(p, i, o)
        # merge into another input that takes the union of both shapes (x0 [s0]
        # and x1 [1, 1] -> x1 [1, s0]): keeps the sizes that matter in one input
        for j, y in enumerate(p.inputs):
            if j != i:
                shape, marks = _union_shape(y, x)
                if shape != y.shape:
                    yield f"input {x.name} -> {y.name} with shape {shape}", _merge_input(p, i, y.name, shape, marks)


def _merge_input(p: Program, i: int, into: str, shape=None, marks=None) -> Program:
    """p with input i removed and its uses reading `into` (reshaped if given)."""
    q = copy.deepcopy(p)
    name = q.inputs[i].name
    del q.inputs[i]
    for c in q.ops:
        c.args = [into if a == name else a for a in c.args]
    q.outputs = [into if a == name else a for a in q.outputs]
    if shape is not None:
        y = next(t for t in q.inputs if t.name == into)
        if y.layout == "expanded":
            y.layout_dim += len(shape) - len(y.shape)
        y.shape, y.marks = list(shape), list(marks) if any(m != "static" for m in marks) else []
    return _tidy(q)


def _union_shape(y: TensorInput, x: TensorInput) -> tuple[list, list]:
    """y's shape with x's dims where y has a literal 1 or no dim (right-aligned)."""
    n = max(len(y.shape), len(x.shape))
    ys = [None] * (n - len(y.shape)) + list(y.shape)
    xs = [None] * (n - len(x.shape)) + list(x.shape)
    ym = [None] * (n - len(y.shape)) + (list(y.marks) or ["static"] * len(y.shape))
    xm = [None] * (n - len(x.shape)) + (list(x.marks) or ["static"] * len(x.shape))
    shape, marks = [], []
    for a, b, ma, mb in zip(ys, xs, ym, xm):
        if (a is None or a == 1) and b is not None:
            shape.append(b)
            marks.append(mb)
        else:
            shape.append(a)
            marks.append(ma)
    return shape, marks


def _pass_rank(p: Program) -> Iterator:
    for i, x in enumerate(p.inputs):
        dims = sorted(range(len(x.shape)), key=lambda d: (x.shape[d] != 1, -d))
        for d in dims:
            q = copy.deepcopy(p)
            q.inputs[i] = _drop_dim(x, d)
            yield f"{x.name}: drop dim {d} ({x.shape[d]})", _tidy(q)


def _pass_symbols(p: Program) -> Iterator:
    syms = list(p.sizes)
    used = {d for x in p.inputs for d in x.shape if isinstance(d, str)}
    for b in reversed(syms):
        for a in syms:
            if a == b or b not in used:
                continue
            q = copy.deepcopy(p)
            for x in q.inputs:
                x.shape = [a if d == b else d for d in x.shape]
            yield f"size symbol {b} -> {a}", _tidy(q)


def _pass_sizes(p: Program) -> Iterator:
    for s, vals in p.sizes.items():
        for c, v in enumerate(vals):
            for w in _smaller_sizes(v):
                q = copy.deepcopy(p)
                q.sizes[s][c] = w
                yield f"{s}[{c}]: {v} -> {w}", q
    for i, x in enumerate(p.inputs):
        for d, n in enumerate(x.shape):
            if isinstance(n, int):
                for w in _smaller_sizes(n):
                    q = copy.deepcopy(p)
                    q.inputs[i].shape[d] = w
                    yield f"{x.name}: dim {d} {n} -> {w}", _tidy(q)


def _pass_attrs(p: Program) -> Iterator:
    for i, x in enumerate(p.inputs):
        def edit(**kw):
            q = copy.deepcopy(p)
            for k, v in kw.items():
                setattr(q.inputs[i], k, v)
            return _tidy(q)
        targets = ["float32"] + ([_PLAIN_OF_KIND[x.dtype]] if x.dtype in _PLAIN_OF_KIND else [])
        for dt in targets if x.dtype != "float32" else ():
            yield f"{x.name}: dtype {x.dtype} -> {dt}", edit(dtype=dt)
            group = _alias_group(p, i)
            if len(group) > 1:  # aliasing inputs change dtype together
                q = copy.deepcopy(p)
                for j in group:
                    q.inputs[j].dtype = dt
                yield f"{x.name} and its aliases: dtype {x.dtype} -> {dt}", _tidy(q)
        if x.alias:
            yield f"{x.name}: its own storage, not {x.alias['of']}'s", edit(alias=None)
            if x.alias.get("calls"):
                yield f"{x.name}: aliased at every call", edit(alias={k: v for k, v in x.alias.items() if k != "calls"})
            for view in ("same", "view"):
                if _VIEW_COST.get(x.alias.get("view"), 3) > _VIEW_COST[view]:
                    q = copy.deepcopy(p)
                    _whole_view(q, i, view)
                    yield f"{x.name}: view {x.alias.get('view')} -> {view}", _tidy(q)
                    # or the base takes the view's shape (a narrow window's, say): no dim grows
                    q = copy.deepcopy(p)
                    base = next(b for b in q.inputs if b.name == x.alias["of"])
                    base.shape, base.marks = list(x.shape), list(x.marks)
                    base.layout, base.layout_dim, base.offset, base.step, base.perm = "contiguous", 0, 3, 2, []
                    _whole_view(q, i, view)
                    yield f"{x.name}: view {x.alias.get('view')} -> {view} of a base of its shape", _tidy(q)
        if x.layout != "contiguous":
            yield f"{x.name}: layout {x.layout} -> contiguous", edit(layout="contiguous", layout_dim=0, offset=3,
                                                                     step=2, perm=[])
            views = [j for j, v in enumerate(p.inputs) if v.alias and v.alias.get("of") == x.name
                     and v.alias.get("view") == "before"]
            for view in ("same", "view") if views else ():  # a view of what lies before an offset needs it
                q = edit(layout="contiguous", layout_dim=0, offset=3, step=2, perm=[])
                for j in views:
                    _whole_view(q, j, view)
                yield f"{x.name}: layout {x.layout} -> contiguous, its views -> {view}", _tidy(q)
        if (x.offset, x.step, x.perm) != (3, 2, []) and x.layout == "contiguous":
            yield f"{x.name}: unused layout fields reset", edit(offset=3, step=2, perm=[])
        if x.mark_negative:
            yield f"{x.name}: marks name dims from the start", edit(mark_negative=False)
        if x.mark_range:
            yield f"{x.name}: no mark_dynamic ranges", edit(mark_range={})
        if x.layout_dim:
            yield f"{x.name}: layout_dim -> 0", edit(layout_dim=0)
        if x.marks and any(m != "static" for m in x.marks):
            yield f"{x.name}: all dims static", edit(marks=[])
            for d, m in enumerate(x.marks):
                for simpler in MARKS:
                    if _MARK_COST[simpler] < _MARK_COST.get(m, 3):
                        marks = list(x.marks)
                        marks[d] = simpler
                        yield f"{x.name}: dim {d} {m} -> {simpler}", edit(marks=marks)
        if x.scale != 1.0:
            yield f"{x.name}: scale {x.scale} -> 1.0", edit(scale=1.0)


def _pass_params(p: Program) -> Iterator:
    for i, c in enumerate(p.ops):
        if c.op == "pad" and c.params.get("mode") not in (None, "constant"):
            q = copy.deepcopy(p)
            q.ops[i].params = {"mode": "constant", "pad": c.params.get("pad"), "value": 0.0}
            yield f"op {i} pad: mode {c.params.get('mode')} -> constant", q
        for k, v in c.params.items():
            for w in _simpler(v, k):
                q = copy.deepcopy(p)
                q.ops[i].params[k] = w
                yield f"op {i} {c.op}: {k} {v!r} -> {w!r}", q


def _dict_drops(p: Program, field: str, label: str) -> Iterator:
    """A settings dict (Inductor options, Dynamo config) emptied, then each key dropped."""
    if getattr(p.settings, field):
        q = copy.deepcopy(p)
        setattr(q.settings, field, {})
        yield f"{label} -> {{}}", q
        for k in list(getattr(p.settings, field)):
            q = copy.deepcopy(p)
            del getattr(q.settings, field)[k]
            yield f"{label}: drop {k}", q


def _pass_settings(p: Program) -> Iterator:
    s = p.settings
    if s.dynamic is not None:
        q = copy.deepcopy(p)
        q.settings.dynamic = None
        yield f"dynamic {s.dynamic} -> None", q
    if s.mode is not None:
        q = copy.deepcopy(p)
        q.settings.mode = None
        yield f"mode {s.mode} -> None", q
    yield from _dict_drops(p, "options", "options")
    for flag in ("backward", "fullgraph"):
        if getattr(s, flag):
            q = copy.deepcopy(p)
            setattr(q.settings, flag, False)
            yield f"{flag} -> False", q
    yield from _dict_drops(p, "dynamo", "dynamo settings")
    if p.seed != 0:
        q = copy.deepcopy(p)
        q.seed = 0
        yield f"seed {p.seed} -> 0", q


def _pass_names(p: Program) -> Iterator:
    if not _names_off(p):
        return
    mapping = {x.name: f"x{i}" for i, x in enumerate(p.inputs)}
    mapping.update({c.out: f"v{i}" for i, c in enumerate(p.ops)})
    # a two-step rename through fresh names avoids clashes (x1 -> x0 while x0 -> ...)
    tmp = {k: f"_t{j}" for j, k in enumerate(mapping)}
    yield "rename values to x0.., v0..", _rename(_rename(p, tmp), {tmp[k]: v for k, v in mapping.items()})


def _pass_calls(p: Program, verdict: Verdict | None) -> Iterator:
    """Fewer calls of the size schedule; `verdict` (the current program's) names the failing one."""
    if p.calls <= 1 or not p.sizes:
        return
    failing = verdict.call if verdict and verdict.call is not None else None
    order = []
    if failing is not None and 0 <= failing < p.calls:
        order.append(("keep only the failing call", [failing]))
    for c in reversed(range(p.calls)):
        if c != failing or p.calls > 2:
            order.append((f"drop call {c}", [i for i in range(p.calls) if i != c]))
    for what, keep in order:
        q = copy.deepcopy(p)
        q.sizes = {k: [v[i] for i in keep] for k, v in q.sizes.items()}
        yield what, q


# -- the kind ------------------------------------------------------------------

class CompiledKind:
    """Compiled Programs for the shrink engine."""

    restart = False  # a pass resumes where it accepted: its earlier candidates failed on a larger program

    def passes(self, engine: Engine) -> list:
        return [("ops", _pass_ops), ("neutral", _pass_neutral), ("inputs", _pass_inputs),
                ("calls", lambda p: _pass_calls(p, engine.current_verdict)), ("rank", _pass_rank),
                ("symbols", _pass_symbols), ("sizes", _pass_sizes), ("attrs", _pass_attrs),
                ("params", _pass_params), ("settings", _pass_settings), ("names", _pass_names)]

    cost = staticmethod(cost)
    canonical = staticmethod(canonical)

    @staticmethod
    def check(p: Program) -> None:
        from fuzz.program.typecheck import typecheck  # lazy: pulls in the op database

        typecheck(p)

    @staticmethod
    def measures(p: Program) -> dict:
        return {"ops": len(p.ops), "inputs": len(p.inputs), "max_rank": max_rank(p), "calls": p.calls}


COMPILED = CompiledKind()


# -- the optional Hypothesis stage ---------------------------------------------

def hypothesis_stage(engine: Engine, examples: int, seed: int) -> dict:
    """Run hypothesis.find over the strategies restricted to the current
    program's ops, dtypes and sizes; accept its match if it costs less."""
    import random

    from hypothesis import HealthCheck, Phase, find, settings

    from strategies import programs

    from fuzz.program import dtypes as D
    from fuzz.program.opdb import OPS

    p = engine.current
    fams = tuple(sorted({OPS[c.op].family for c in p.ops if c.op in OPS}))
    stats = {"examples": examples, "evaluations": 0, "found": False, "accepted": False}
    kw = dict(backend=p.settings.backend, device=p.settings.device, min_ops=1, max_ops=max(1, len(p.ops)),
              max_inputs=max(1, len(p.inputs)), max_rank=max(1, max_rank(p)),
              dtypes=tuple(sorted({x.dtype for x in p.inputs} & set(D.ALL))) or D.ALL,
              dynamic_flags=tuple(dict.fromkeys([None, p.settings.dynamic])))
    if fams:
        kw.update(families=fams, ops=sorted({c.op for c in p.ops}))
    try:
        strategy = programs(**kw)
    except Exception as e:  # noqa: BLE001 - e.g. no op of the finding is drawable
        stats["error"] = f"{type(e).__name__}: {e}"
        return stats
    best: list = []
    before = engine.evaluations

    def condition(q: Program) -> bool:
        if time.monotonic() > engine.deadline:
            return False
        try:
            ok, v = engine.reproduces(q)
        except OutOfTime:
            return False
        if ok and (not best or cost(q) < cost(best[0][0])):
            best[:] = [(q, v)]
        return ok

    try:
        find(strategy, condition, random=random.Random(seed),
             settings=settings(max_examples=examples, database=None, deadline=None,
                               phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck)))
    except Exception as e:  # noqa: BLE001 - NoSuchExample, or Flaky when the budget ran out mid-shrink
        stats["ended"] = type(e).__name__
    stats["evaluations"] = engine.evaluations - before
    if best:
        stats["found"] = True
        q, v = best[0]
        stats["ops"] = len(q.ops)
        if cost(q) < engine.current_cost:
            engine.accept(q, v, "hypothesis", "hypothesis.find over the restricted strategy")
            stats["accepted"] = True
    return stats
