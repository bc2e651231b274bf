"""Mutants of programs (coverage guidance): small edits of a
program's IR that reached new compiler lines, so a campaign explores the code
next to what it reached instead of drawing blind. An edit is one of EDITS:

  swap_op       an op in place of another of its family, its params drawn anew
  params        an op's params drawn anew (pad widths and modes, dims, lengths)
  insert_op     a new op after any value; a later use of that value reads it
                instead, where the two have the same type
  delete_op     an op dropped, its uses reading its first operand
  mark          the mark of one size symbol (on every dim of it) or one literal dim
  dtype         an input's dtype (and its aliases')
  layout        an input's layout
  dynamic       torch.compile(dynamic=...)
  values        the seed of the input values

A mutant is one to three edits in a row; each must leave a program the type
checker (fuzz/program/typecheck.py) accepts and that keeps the generator's own
rules (an unbacked mark only on a symbol no op guards; in a backward program
differentiable ops and no writes to inputs), else the draw gives None, which
the caller drops. Edits draw only from the campaign's menu, as programs() does."""

from __future__ import annotations

import copy

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.ir import MARKS, ProgramError, Program
from fuzz.program.layouts import LAYOUTS
from fuzz.program.opdb import OPS
from fuzz.program.opspec import FAMILIES
from fuzz.program.typecheck import typecheck
from fuzz.findings.shrink.program_edits import leaves, remove_ops

from .programs import _Draft, _draw_op, in_backward, op_menus, writable_in_backward
from .shapes import layouts as layout_fields

EDITS = ("swap_op", "params", "insert_op", "delete_op", "mark", "dtype", "layout", "dynamic", "values")
MAX_EDITS = 3


class Menu:
    """What edits may draw from: the campaign's families, ops, dtypes, layouts,
    marks and dynamic= values (programs()' arguments of the same names)."""

    def __init__(self, *, device: str = "cpu", families=FAMILIES, ops=None, dtypes=D.ALL, layouts=LAYOUTS,
                 marks=MARKS, dynamic_flags=(None, True, False), max_ops: int = 6):
        from .markings import has_mark_unbacked

        self.ops, self.grad_ops = op_menus(families, ops, device)
        self.dtypes, self.layouts = tuple(dtypes), tuple(layouts)
        self.marks = tuple(m for m in marks if m != "unbacked" or has_mark_unbacked())
        self.dynamic_flags = tuple(dynamic_flags)
        self.max_ops = max_ops  # as programs(): a pool program mutated again would grow without it

    def for_program(self, p: Program) -> dict:
        return self.grad_ops if p.settings.backward else self.ops


def keeps_rules(p: Program, env: dict | None = None) -> bool:
    """The generator's rules beyond the type checker's: no unbacked mark on a
    symbol an op guards, and a backward program holds only ops it may
    (programs.in_backward) and writes in place only a value autograd keeps
    nothing of (programs.writable_in_backward)."""
    env = env if env is not None else typecheck(p)
    guarded: set = set()
    for c in p.ops:
        guarded |= OPS[c.op].guards([env[a] for a in c.args], c.params)
    for x in p.inputs:
        for d, m in zip(x.shape, x.marks or []):
            if m == "unbacked" and (not isinstance(d, str) or d in guarded):
                return False
    if p.settings.backward:
        for j, c in enumerate(p.ops):
            spec = OPS[c.op]
            before = {e.out: e for e in p.ops[:j]}
            if not in_backward(spec) or (spec.mutates
                                         and not writable_in_backward(before, c.args[0], env[c.args[0]], env)):
                return False
    return True


def _valid(p: Program) -> bool:
    try:
        return keeps_rules(p, typecheck(p))
    except ProgramError:
        return False


def _fresh_name(p: Program) -> str:
    taken = {x.name for x in p.inputs} | {c.out for c in p.ops}
    return next(f"v{k}" for k in range(len(taken) + 1) if f"v{k}" not in taken)


def _draft_before(p: Program, j: int, menu_layouts, dtypes) -> _Draft:
    """A generator draft holding p's inputs and its values before op j."""
    draft = _Draft(dict(p.sizes), list(p.inputs), menu_layouts, dtypes)
    env = typecheck(Program(sizes=p.sizes, inputs=p.inputs, ops=p.ops[:j], outputs=[p.inputs[0].name],
                            settings=p.settings))
    for c in p.ops[:j]:
        draft.env[c.out] = env[c.out]
        draft.values.append(c.out)
        draft.made[c.out] = c
    draft.backward = p.settings.backward
    return draft


def _swap_op(d, p: Program, menu: Menu):
    if not p.ops:
        return None
    j = d(st.integers(0, len(p.ops) - 1))
    call = p.ops[j]
    env = typecheck(p)
    args = [env[a] for a in call.args]
    old = OPS[call.op]
    others = [o for o in menu.for_program(p).get(old.family, []) if o.name != old.name and o.arity == old.arity
              and o.accepts(args[0]) and all(o.fits(args[:k], args[k]) for k in range(1, o.arity))
              and not (o.mutates and args[0].overlapping) and not (o.inputs_only and not args[0].is_input)]
    if not others:
        return None
    spec = d(st.sampled_from(others))
    params = d(spec.params(args))
    if spec.check(args, params):
        return None
    q = copy.deepcopy(p)
    q.ops[j].op, q.ops[j].params = spec.name, params
    return q, f"swap_op {j} {call.op}->{spec.name}"


def _params(d, p: Program, menu: Menu):
    if not p.ops:
        return None
    j = d(st.integers(0, len(p.ops) - 1))
    call, env = p.ops[j], typecheck(p)
    spec, args = OPS[call.op], [env[a] for a in call.args]
    params = d(spec.params(args))
    if params == call.params or spec.check(args, params):
        return None
    q = copy.deepcopy(p)
    q.ops[j].params = params
    return q, f"params {j} {call.op}"


def _insert_op(d, p: Program, menu: Menu):
    if len(p.ops) >= menu.max_ops:
        return None
    j = d(st.integers(0, len(p.ops)))
    q = copy.deepcopy(p)
    draft = _draft_before(q, j, menu.layouts, menu.dtypes)
    call = _draw_op(d, draft, menu.for_program(q), _fresh_name(q), backward=q.settings.backward)
    if call is None:
        return None
    # a fresh operand the op drew: its symbols keep the mark they have on the other inputs (symbol_marks)
    by_symbol = {dim: (x.marks or ["static"] * len(x.shape))[k] for x in q.inputs for k, dim in enumerate(x.shape)
                 if isinstance(dim, str)}
    for x in draft.inputs[len(q.inputs):]:
        x.marks = [by_symbol.get(dim, "static") if isinstance(dim, str) else "static" for dim in x.shape]
        if all(m == "static" for m in x.marks):
            x.marks = []
    q.inputs = draft.inputs
    q.ops.insert(j, call)
    env = typecheck(q)
    a, new = call.args[0], env[call.out]
    if d(st.booleans()) and new.shape == env[a].shape and new.dtype == env[a].dtype:  # in the middle of a chain
        for later in q.ops[j + 1:]:
            later.args = [call.out if x == a else x for x in later.args]
    q.outputs = list(dict.fromkeys(q.outputs + leaves(q)))  # the new value, unless read later
    return q, f"insert_op {j} {call.op}"


def _delete_op(d, p: Program, menu: Menu):
    if len(p.ops) < 2:
        return None
    j = d(st.integers(0, len(p.ops) - 1))
    return remove_ops(p, {j}, rewire=0), f"delete_op {j} {p.ops[j].op}"


def _mark(d, p: Program, menu: Menu):
    symbols = sorted({dim for x in p.inputs for dim in x.shape if isinstance(dim, str)})
    literal = [(i, k) for i, x in enumerate(p.inputs) for k, dim in enumerate(x.shape) if isinstance(dim, int)]
    if not symbols and not literal:
        return None
    q = copy.deepcopy(p)
    if symbols and (not literal or d(st.booleans())):
        s = d(st.sampled_from(symbols))
        mark = d(st.sampled_from(menu.marks))
        where = [(x, k) for x in q.inputs for k, dim in enumerate(x.shape) if dim == s]
        what = f"mark {s}={mark}"
    else:
        i, k = d(st.sampled_from(literal))
        mark = d(st.sampled_from([m for m in ("static", "maybe_dynamic") if m in menu.marks]))
        where, what = [(q.inputs[i], k)], f"mark {q.inputs[i].name}[{k}]={mark}"
    for x, k in where:
        x.marks = list(x.marks) if x.marks else ["static"] * len(x.shape)
        x.marks[k] = mark
        x.mark_range.pop(str(k), None)  # a range holds for mark_dynamic only
        if all(m == "static" for m in x.marks):
            x.marks, x.mark_negative = [], False
    return q, what


def _dtype(d, p: Program, menu: Menu):
    bases = [x for x in p.inputs if x.alias is None]
    x = d(st.sampled_from(bases))
    dt = d(st.sampled_from([t for t in menu.dtypes if t != x.dtype] or [x.dtype]))
    q = copy.deepcopy(p)
    for y in q.inputs:
        if y.name == x.name or (y.alias or {}).get("of") == x.name:
            y.dtype = dt
    return q, f"dtype {x.name}={dt}"


def _layout(d, p: Program, menu: Menu):
    bases = [x for x in p.inputs if x.alias is None]
    x = d(st.sampled_from(bases))
    fields = d(layout_fields(x.shape, menu.layouts))
    q = copy.deepcopy(p)
    y = next(y for y in q.inputs if y.name == x.name)
    for k, v in fields.items():
        setattr(y, k, v)
    return q, f"layout {x.name}={fields['layout']}"


def _dynamic(d, p: Program, menu: Menu):
    flag = d(st.sampled_from([f for f in menu.dynamic_flags if f != p.settings.dynamic] or [p.settings.dynamic]))
    q = copy.deepcopy(p)
    q.settings.dynamic = flag
    return q, f"dynamic {flag}"


def _values(d, p: Program, menu: Menu):
    q = copy.deepcopy(p)
    q.seed = d(st.integers(0, 2**16))
    return q, "values"


_EDIT = {"swap_op": _swap_op, "params": _params, "insert_op": _insert_op, "delete_op": _delete_op,
         "mark": _mark, "dtype": _dtype, "layout": _layout, "dynamic": _dynamic, "values": _values}


def edited(d, p: Program, menu: Menu, edit: str):
    """(program, what was done) after one edit of kind `edit`, or None where it
    does not apply or leaves an invalid program."""
    try:
        got = _EDIT[edit](d, p, menu)
    except ProgramError:  # a draft of an invalid parent
        return None
    if got is None or not _valid(got[0]) or got[0] == p:
        return None
    return got


def mutants(parents: list, menu: Menu) -> st.SearchStrategy:
    """(parent index, [edits], program) of a mutant of one of `parents`, or None."""
    @st.composite
    def draw(d):
        k = d(st.integers(0, len(parents) - 1))
        p, done = parents[k], []
        wanted = d(st.integers(1, MAX_EDITS))
        for _ in range(2 * wanted + 2):  # an edit that does not apply is tried again as another
            if len(done) >= wanted:
                break
            got = edited(d, p, menu, d(st.sampled_from(EDITS)))
            if got is not None:
                p, what = got
                done.append(what)
        return (k, done, p) if done and p != parents[k] else None  # edits may undo each other
    return draw()
