"""Edits of a compiled Program that the shrink passes (fuzz/findings/shrink/compiled.py)
build candidates from: dropping ops with their uses rewired, renaming, dropping a
dim, tidying symbols and alias shapes, and the rewrites that put neutral ops in
place of ops a bug does not need."""

from __future__ import annotations

import copy
import itertools
from typing import Iterator

from fuzz.program.ir import NEUTRAL_BINARY, NEUTRAL_OP, REPRESENTATIVES, OpCall, Program, TensorInput
from fuzz.program.layouts import view_shape


def leaves(p: Program) -> list:
    """The values no op reads (the last op's, or the first input, where there are none)."""
    used = {a for c in p.ops for a in c.args}
    out = [c.out for c in p.ops if c.out not in used]
    return out or ([p.ops[-1].out] if p.ops else [p.inputs[0].name])


def _tidy(p: Program) -> Program:
    """Drop size symbols no input uses (one stays: it carries the call count)
    and all-static marks."""
    used = {d for x in p.inputs for d in x.shape if isinstance(d, str)}
    if p.sizes:
        keep = {k: v for k, v in p.sizes.items() if k in used}
        if not keep:
            k0 = next(iter(p.sizes))
            keep = {k0: p.sizes[k0]}
        p.sizes = keep
    for x in p.inputs:
        if x.marks and all(m == "static" for m in x.marks):
            x.marks = []
    by_name = {x.name: x for x in p.inputs}
    for x in p.inputs:  # an aliasing input's shape follows its base's (a rank or size step on the base)
        base = by_name.get((x.alias or {}).get("of"))
        shape = view_shape(x.alias, base) if base is not None else None
        if shape is not None and len(shape) == len(x.marks or shape):
            x.shape = shape
    return p


def remove_ops(p: Program, drop: set, rewire: int | None = 0) -> Program:
    """p without the ops at indices `drop`. rewire=k: uses of a dropped op's
    result read its k-th argument instead (transitively); rewire=None: ops that
    depend on a dropped result are dropped too. Outputs become the leaves."""
    q = copy.deepcopy(p)
    subst: dict = {}
    dead: set = set()
    ops = []
    for i, c in enumerate(q.ops):
        args = [subst.get(a, a) for a in c.args]
        if i in drop or (rewire is None and any(a in dead for a in args)):
            if rewire is None:
                dead.add(c.out)
            else:
                subst[c.out] = args[min(rewire, len(args) - 1)]
            continue
        c.args = args
        ops.append(c)
    q.ops = ops
    q.outputs = leaves(q)
    return _tidy(q)


def _rename(p: Program, mapping: dict) -> Program:
    q = copy.deepcopy(p)
    for x in q.inputs:
        x.name = mapping.get(x.name, x.name)
    for c in q.ops:
        c.args = [mapping.get(a, a) for a in c.args]
        c.out = mapping.get(c.out, c.out)
    q.outputs = [mapping.get(o, o) for o in q.outputs]
    return q


def _drop_dim(x: TensorInput, d: int) -> TensorInput:
    x = copy.deepcopy(x)
    del x.shape[d]
    if x.marks:
        del x.marks[d]
    if x.layout == "expanded":
        if x.layout_dim == d or not x.shape:
            x.layout, x.layout_dim = "contiguous", 0
        elif x.layout_dim > d:
            x.layout_dim -= 1
    if x.layout == "transposed" and len(x.shape) < 2:
        x.layout = "contiguous"
    return x


def _alias_group(p: Program, i: int) -> list:
    """Indices of input i, the input it is a view of, and the inputs that are
    views of either: one storage, so one dtype (a view has its base's)."""
    names = {p.inputs[i].name}
    if p.inputs[i].alias:
        names.add(p.inputs[i].alias.get("of"))
    return [j for j, x in enumerate(p.inputs) if x.name in names or (x.alias and x.alias.get("of") in names)]


def _whole_view(q: Program, j: int, view: str) -> None:
    """Input j (an alias) becomes a view of all of its base: the base itself
    ("same": Dynamo sees one input) or a fresh view of it ("view": two)."""
    x = q.inputs[j]
    base = next(b for b in q.inputs if b.name == x.alias["of"])
    x.alias = {"of": base.name, "view": view, **({"calls": x.alias["calls"]} if x.alias.get("calls") else {})}
    x.shape = list(base.shape)


def _substitutions(p: Program) -> Iterator:
    """Op i -> NEUTRAL_OP on a fresh input shaped like op i's result: a bug
    that needs a value of some shape (a layout bug needs a 2-d output, say)
    does not need the op that made it, and NEUTRAL_OP on its own input keeps
    the shape. A dim that is neither a literal nor a plain size symbol (an
    unbacked size) becomes a new size symbol with the sizes an eager run gives
    it: a bug that needs a large value out of nonzero needs a large input."""
    from fuzz.program.typecheck import typecheck  # lazy: pulls in the op database
    from fuzz.program.ir import ProgramError

    try:
        env = typecheck(p)
    except ProgramError:
        return
    fresh = _unused("x", {x.name for x in p.inputs}, start=len(p.inputs))
    for i, c in enumerate(p.ops):
        if c.op == NEUTRAL_OP:
            continue
        info = env[c.out]
        shape, new_sizes, seen = [], {}, None  # seen: the op's eager shapes, run at its first unbacked dim
        for k, d in enumerate(info.shape):
            if d.is_symbol and d.base in p.sizes:
                shape.append(d.base)
            elif d.is_literal or (len(set(d.values)) == 1 and not d.is_data_dependent):
                shape.append(d.values[0] if d.values else d.const)
            else:  # an unbacked size (nonzero's count, say): a new symbol with the sizes eager makes
                if seen is None:
                    seen = _eager_shapes(p, c.out)
                if seen is None or any(len(s) != len(info.shape) for s in seen):
                    break
                sym = _unused("s", set(p.sizes) | set(new_sizes))
                new_sizes[sym] = [s[k] for s in seen]
                shape.append(sym)
        else:
            q = copy.deepcopy(p)
            q.sizes.update(new_sizes)
            q.inputs.append(TensorInput(name=fresh, shape=shape, dtype=info.dtype))
            q.ops[i] = OpCall(op=NEUTRAL_OP, args=[fresh], params={}, out=c.out)
            yield f"op {i} {c.op} -> {NEUTRAL_OP} of a new input {fresh}{shape}", _tidy(q)


def _unused(prefix: str, taken: set, start: int = 0) -> str:
    """The first of prefix+start, prefix+(start+1), ... not in `taken`."""
    return next(name for k in itertools.count(start) if (name := f"{prefix}{k}") not in taken)


def _eager_shapes(p: Program, value: str) -> list | None:
    """The shape of `value` at each call of p's schedule, run eagerly (None if that fails)."""
    import torch

    from fuzz.program.interp import load

    q = copy.deepcopy(p)
    q.outputs, q.settings.backward = [value], False
    try:
        prog = load(q)
        shapes = []
        for call in range(q.calls):
            with torch.no_grad():
                out = prog.program(*prog.make_inputs(call))
            out = out[0] if isinstance(out, (tuple, list)) else out
            shapes.append(list(out.shape))
        return shapes
    except Exception:  # noqa: BLE001 - no shapes, no candidate
        return None


def _joins(p: Program) -> Iterator:
    """Two ops -> one NEUTRAL_BINARY of their first operands: a bug that needs
    two inputs read (aliasing inputs, say) took two unary ops where one
    binary op does, and dropping either op alone loses an input."""
    n = len(p.ops)
    if not 2 <= n <= 8:
        return
    first = {c.out: c.args[0] for c in p.ops}
    names = {x.name for x in p.inputs} | set(first)
    out = next(f"v{k}" for k in range(n, 2 * n + 2) if f"v{k}" not in names)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = p.ops[i].args[0], p.ops[j].args[0]
            while b in first and b in (p.ops[i].out, p.ops[j].out):
                b = first[b]
            if a == b:
                continue
            q = remove_ops(p, {i, j}, 0)
            q.ops.append(OpCall(op=NEUTRAL_BINARY, args=[a, b], params={}, out=out))
            q.outputs = leaves(q)
            yield f"ops {i} {p.ops[i].op} and {j} {p.ops[j].op} -> one {NEUTRAL_BINARY}", _tidy(q)


def _representative(op: str) -> tuple | None:
    """(representative, Dynamo settings) of op's family in REPRESENTATIVES, or None."""
    from fuzz.program.opdb import OPS  # lazy: the op database pulls in hypothesis

    return REPRESENTATIVES.get(OPS[op].family) if op in OPS else None


def off_representative(p: Program) -> int:
    """How many ops belong to a family of REPRESENTATIVES but are not its representative."""
    return sum((rep := _representative(c.op)) is not None and c.op != rep[0] for c in p.ops)


def _one_element(q: Program, name: str) -> bool:
    """Input `name` of q, when 0-d and no alias, becomes one of one element (in place); whether it did."""
    x = next((x for x in q.inputs if x.name == name and not x.shape and not x.alias), None)
    if x is not None:
        x.shape, x.marks = [1], []
    return x is not None


def _representatives(p: Program) -> Iterator:
    """Op i -> its family's representative on the same first operand, with the
    Dynamo settings that keep it in the graph: the bugs of a shared path then
    shrink to one minimal program, whichever op of the family found them."""
    from fuzz.program.opdb import OPS

    for i, c in enumerate(p.ops):
        rep = _representative(c.op)
        if rep is None or c.op == rep[0]:
            continue
        op, dynamo = rep
        q = copy.deepcopy(p)
        q.ops[i] = OpCall(op=op, args=c.args[:OPS[op].arity], params={}, out=c.out)
        q.settings.dynamo = {**q.settings.dynamo, **dynamo}
        yield f"op {i} {c.op} -> {op}, the {OPS[c.op].family} family's representative", _tidy(q)
        # a 0-d operand gives nonzero an empty result (no value left to be wrong): one of one element
        q = copy.deepcopy(q)  # the engine may hold the candidate just yielded
        if _one_element(q, c.args[0]):
            yield f"op {i} {c.op} -> {op} of a one-element {c.args[0]}", _tidy(q)
    # the representative alone on a 0-d input has nothing to get wrong, so another op's output
    # carried the bug: the representative alone on one element (one step: each half costs more)
    for i, c in enumerate(p.ops):
        rep = _representative(c.op)
        if len(p.ops) < 2 or rep is None or c.op != rep[0]:
            continue
        q = remove_ops(p, set(range(len(p.ops))) - {i}, None)
        if _one_element(q, c.args[0]):
            yield f"op {i} {c.op} alone, of a one-element {c.args[0]}", _tidy(q)
