"""What a program does with a value, for rules that name a root cause rather than one minimal form.

A known-issue rule that names one minimal program (dropout, then zero_ of its input) misses the same
cause seen through another symptom (a slice assignment, a returned alias, a stride check), and each
such finding became an entry of its own. These predicates describe the cause instead:

    escapes(p, op)          a result of `op` (or a view of it) is returned or written in place: where an
                            op that returns its input itself in eager (dropout with p=0) is compiled to a
                            copy, this is when anyone can tell
    operand_dtypes(p, op)   the dtypes of `op`'s first operand wherever the program calls it

They read the program as data (fuzz/program/ir.py) and the op table; nothing runs.
"""

from __future__ import annotations


def _aliases(p, root: str) -> set:
    """`root` and every value that is a view of it (through chains of view ops)."""
    from fuzz.program.ops import OPS

    names = {root}
    for c in p.ops:
        spec = OPS.ops.get(c.op)
        if spec is not None and spec.family == "view" and c.args and c.args[0] in names:
            names.add(c.out)
    return names


def escapes(p, op: str) -> bool:
    """Some result of `op`, or a view of it, is an output of `p` or the first operand of an in-place op."""
    from fuzz.program.ops import OPS

    outputs = set(getattr(p, "outputs", ()))
    for c in getattr(p, "ops", ()):
        if c.op != op:
            continue
        held = _aliases(p, c.out)
        if held & outputs:
            return True
        for d in p.ops:
            spec = OPS.ops.get(d.op)
            if spec is not None and spec.mutates and d.args and d.args[0] in held:
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
