"""What a program's structure says the maintainers' rules allow, for the judge
and every repro.py: which outputs' strides are not judged, which outputs are
indices whose ties may break either way, and which stride mismatches fall in
the one tracked class of unbacked strides.

Pure functions of a Program (its type-checked values); the loop (loop.py,
embedded in repros, torch only) takes their answers as plain data.
"""

from __future__ import annotations

from fuzz.program.ir import Program
from fuzz.program.symbolic import unbacked_one_meets
from fuzz.program.typecheck import typecheck


def _ancestry(p: Program, env: dict, hit) -> dict:
    """name -> whether `hit` holds for that value or any value it is computed from."""
    seen = {x.name: bool(hit(env[x.name])) for x in p.inputs}
    for c in p.ops:
        seen[c.out] = bool(hit(env[c.out])) or any(seen.get(a, False) for a in c.args)
    return seen


def stride_exempt(p: Program) -> list:
    """Output indices computed from a self-overlapping value (an expanded or
    as_strided input, an expand or unfold view): eager lays such a result out
    by tie-breaking between equal strides, so its dim order is no contract
    (a stride check there flags a correct compiler)."""
    env = typecheck(p)
    tied = _ancestry(p, env, lambda v: v.overlapping)
    return [i for i, name in enumerate(p.outputs) if tied.get(name)]


# Ops documented to return a view or a copy as they see fit (reshape, flatten, contiguous, a cast to the
# dtype it has, the copy view_dtype may make first): whether their result shares its input's storage is
# no contract, so a compiler may choose otherwise.
VIEW_OR_COPY = frozenset({"reshape", "flatten", "reshape_lit", "contiguous", "cast", "view_dtype"})


def alias_exempt(p: Program) -> list:
    """Output indices computed through a VIEW_OR_COPY op: their aliasing is not judged (loop.alias_of)."""
    seen = {x.name: False for x in p.inputs}
    for c in p.ops:
        seen[c.out] = c.op in VIEW_OR_COPY or any(seen.get(a, False) for a in c.args)
    return [i for i, name in enumerate(p.outputs) if seen.get(name)]


def _unbacked_symbols(p: Program) -> set:
    return {d for x in p.inputs for d, m in zip(x.shape, x.marks) if m == "unbacked" and isinstance(d, str)}


def unbacked_dims(p: Program, i: int) -> set:
    """The dims of output i whose size the compiler holds as an unbacked
    symbol: a data-dependent size, or one of a dim marked unbacked."""
    if not 0 <= i < len(p.outputs):
        return set()
    env = typecheck(p)
    marked = _unbacked_symbols(p)
    return {k for k, d in enumerate(env[p.outputs[i]].shape) if d.is_data_dependent or d.syms & marked}


def unbacked_strides(p: Program, i: int, shape, *strides) -> bool:
    """Whether any of `strides` (output i's, compiled and eager) holds an
    unbacked symbol: an unbacked dim longer than 1 with another such dim of a
    larger stride (whose stride then counts it). Inductor gives up exact stride
    matching there on purpose: one policy question, one tracked class, not a
    bug per op."""
    dims = unbacked_dims(p, i)
    for st in strides:
        if len(st) != len(shape):
            continue
        for k in dims:
            if k < len(shape) and shape[k] > 1 and any(shape[j] > 1 and st[j] > st[k] for j in range(len(shape))):
                return True
    return False


def _broadcast_pairs(family: str, shapes: list) -> list:
    """The pairs of shapes an op broadcasts against each other: every pair of its operands' (pointwise,
    binary, in-place ops); a matrix product's batch dims, or its bias against the product."""
    if family == "matrix":
        if len(shapes) == 3:  # addmm, baddbmm: the bias against the product's shape
            return [(shapes[2], shapes[0][:-1] + shapes[1][-1:])]
        return [(shapes[0][:-2], shapes[1][:-2])]
    return [(a, b) for i, a in enumerate(shapes) for b in shapes[i + 1:]]


def unbacked_one_broadcast(p: Program) -> bool:
    """Whether an op broadcasts a data-dependent size that is 1 at every call against a size larger at some
    call (symbolic.unbacked_one_meets): eager broadcasts it, the compiler asserts it does not (by design;
    expected.py's unbacked-broadcast-assert)."""
    from fuzz.program.opdb import OPS

    env = typecheck(p)
    for c in p.ops:
        spec = OPS[c.op] if c.op in OPS else None
        if spec is None or spec.arity < 2 or spec.family not in ("pointwise", "binary", "inplace", "matrix"):
            continue
        if any(unbacked_one_meets(a, b) for a, b in _broadcast_pairs(spec.family, [env[a].shape for a in c.args])):
            return True
    return False


# index op -> what its indices pick: the max or min along a dim (argmax, argmin), or the sorted order (sort)
_INDEX_OPS = {"argmax": "max", "argmin": "min"}


def index_outputs(p: Program) -> dict:
    """Output index -> (kind, source name, dim, flag) for the outputs that are
    indices straight out of an index op: kind "max"/"min" (argmax/argmin;
    dim None: of the flattened source; flag: keepdim) or "sort" (flag:
    descending). Ties among the source's values may pick any of the tied
    indices (the bug template's fuzzer rule), so these are checked by the
    values they pick."""
    ops = {c.out: c for c in p.ops}
    out = {}
    for i, name in enumerate(p.outputs):
        c = ops.get(name)
        if c is None:
            continue
        if c.op in _INDEX_OPS:
            out[i] = (_INDEX_OPS[c.op], c.args[0], c.params.get("dim"), bool(c.params.get("keepdim")))
        elif c.op == "sort" and c.params.get("take") == "indices":
            out[i] = ("sort", c.args[0], c.params["dim"], bool(c.params.get("descending")))
    return out


def index_table(p: Program) -> tuple[dict, Program | None]:
    """({output index: (kind, dim, flag)} for loop.run_schedule, and the
    program whose outputs are the values those outputs index, in that order),
    or ({}, None) when no output is indices."""
    found = index_outputs(p)
    if not found:
        return {}, None
    q = Program.from_dict(p.to_dict())
    q.outputs = [src for _, src, _, _ in found.values()]
    return {i: (kind, dim, flag) for i, (kind, _, dim, flag) in found.items()}, q


# ---- thresholds: where one ulp decides ----------------------------------------------------------

ROUNDING_RULE = "rounding-decided"
ROUNDING_WHY = ("the outputs differ only through a discontinuous op (a comparison, a rounding, a data-dependent "
                "size) on computed floats that compiled computes no further from a float64 run than eager: one "
                "ulp on the other side of a threshold is rounding, not a bug (the fuzzer rule of torch.compile's "
                "bug template)")


def rounding_edges(p: Program) -> tuple[list, dict]:
    """(edges, {output index: indices into edges}): the computed floating values an op decides on
    discontinuously (OpSpec.decides), in program order, and which of them each output is computed from.
    Not a program input nor a view of one before any write (its bits are the same in every correct
    compiler), nor a value of a storage some op writes (a write through another view would bypass its
    replacement in the replay, loop.py). ([], {}) when there is none."""
    from fuzz.program.dtypes import is_floating
    from fuzz.program.opdb import OPS

    env = typecheck(p)
    written = {env[c.args[0]].root for c in p.ops if c.op in OPS and OPS[c.op].mutates}
    edges = []
    for c in p.ops:
        for k in OPS[c.op].decides if c.op in OPS else ():
            v = env[c.args[k]]
            if is_floating(v.dtype) and not v.bits_fixed and v.root not in written and c.args[k] not in edges:
                edges.append(c.args[k])
    if not edges:
        return [], {}
    reads = {x.name: {x.name} for x in p.inputs}  # name -> the values it is computed from, itself included
    for c in p.ops:
        reads[c.out] = {c.out}.union(*(reads.get(a, set()) for a in c.args))
    table = {i: [j for j, e in enumerate(edges) if e in reads.get(name, ())] for i, name in enumerate(p.outputs)}
    return edges, {i: js for i, js in table.items() if js}


def edges_program(p: Program, edges: list) -> Program:
    """The program whose outputs are `edges`, in that order: p up to the op that computes the last of them
    (what comes after, a data-dependent op say, would only cost a compile); what the judge compiles and runs
    to read them."""
    q = Program.from_dict(p.to_dict())
    q.ops = q.ops[:1 + max(i for i, c in enumerate(q.ops) if c.out in edges)]
    q.outputs = list(edges)
    return q
