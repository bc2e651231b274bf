"""What a program does with a value, for rules that name a root cause rather than one minimal form.

A known-issue rule that names one minimal program (dropout, then zero_ of its input) misses the same
cause seen through another symptom (a slice assignment, a returned alias, a stride check), and each
such finding became an entry of its own. These predicates describe the cause instead:

    escapes(p, op, where)   a result of `op` (or a view of it) is returned or written in place: where an
                            op that returns its input itself in eager (dropout with p=0) is compiled to a
                            copy, this is when anyone can tell. Given the verdict's `where`, it must be
                            there: "output N" is that result; "input X" is X written through it
    operand_dtypes(p, op)   the dtypes of `op`'s first operand wherever the program calls it

They read the program as data (fuzz/program/ir.py) and the op table; nothing runs.
"""

from __future__ import annotations

import re


def _aliases(p, root: str) -> set:
    """`root` and every value that is a view of it (through chains of view ops)."""
    from fuzz.program.ops import OPS

    names = {root}
    for c in p.ops:
        spec = OPS.ops.get(c.op)
        if spec is not None and spec.family == "view" and c.args and c.args[0] in names:
            names.add(c.out)
    return names


def escapes(p, op: str, where: str = "") -> bool:
    """Some result of `op`, or a view of it, is an output of `p` or the first operand of an in-place op.
    With a verdict's `where` the escape must be the one it names, so that a program which merely holds
    such an op is not blamed for another output's mismatch: "output N" must be that result (or a view
    of it); "input X" must be written through it, `op`'s operand being X or a view of X."""
    from fuzz.program.ops import OPS

    outputs = list(getattr(p, "outputs", ()))
    returned, written_input, in_place = set(outputs), None, True
    if m := re.match(r"output (\d+)\b", where or ""):
        n = int(m.group(1))
        returned = {outputs[n]} if n < len(outputs) else set()
        in_place = not returned  # that output is the escape, not a write elsewhere
    elif m := re.match(r"input (\w+)$", where or ""):
        written_input, returned = _aliases(p, m.group(1)), set()
    for c in getattr(p, "ops", ()):
        if c.op != op or (written_input is not None and not (c.args and c.args[0] in written_input)):
            continue
        held = _aliases(p, c.out)
        if held & returned:
            return True
        if in_place and any(d.args and d.args[0] in held and getattr(OPS.ops.get(d.op), "mutates", False)
                            for d in p.ops):
            return True
    return False


def operand_dtypes(p, op: str) -> set:
    """The dtypes of the first operand of every call of `op` in `p` (empty when it has none, or the
    program does not typecheck)."""
    from fuzz.program.typecheck import typecheck

    calls = [c for c in getattr(p, "ops", ()) if c.op == op and c.args]
    if not calls:
        return set()
    try:
        infos = typecheck(p)
    except ValueError:
        return set()
    return {infos[c.args[0]].dtype for c in calls if c.args[0] in infos}
