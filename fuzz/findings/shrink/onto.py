"""Shrinking onto a known minimal form: the cheap way to a new entry's
minimal signature when the corpus already holds the bug.

A campaign against one bug meets it in many programs, each a new provisional
signature (a value finding's op families); a full shrink of every one costs
tens of evaluations. Once one of them is shrunk and re-keyed, the next can be
tried against that entry's minimal program M first (`onto_stage`, a prelude
of the shrink engine):

1. `project(P, M)`: P reduced towards M's minimal parts (program.minimal_parts:
   op kinds in order, non-default features) by the shrinker's own edits only
   -- keep a subsequence of P's ops whose kinds are M's (an op M holds as
   NEUTRAL_OP may be any op, neutralised), drop the others with their uses
   rewired, unused inputs dropped, every feature M does not have reset to its
   default. Only a candidate whose minimal parts equal M's is tried.
2. The candidate C must reproduce P's bucket (the engine's pinning) with M's
   minimal signature.
3. `confirmed(C)`: every candidate of the shrink passes that would change C's
   minimal parts (drop or neutralise an op, a feature to its default, a
   simpler name or flag param) must NOT reproduce -- C is a minimal form in
   everything the key names, exactly what a full shrink would have to reach.
   (This also keeps a bug that needs less than M, e.g. one that needs no pad
   where M needs a pad, from being filed under M.)

Then the engine stops (Settled) and re-checks C once; the entry is merged
into M's with C as its program. If any step fails, the normal passes go on
from the smallest program accepted: nothing is lost but a few evaluations.
"""

from __future__ import annotations

import copy
from typing import Iterator

from fuzz.findings.shrink.compiled import (_pass_attrs, _pass_neutral, _pass_ops, _pass_params, _pass_settings,
                                           _tidy, cost, remove_ops)
from fuzz.findings.shrink.engine import Engine, Settled
from fuzz.findings.signature import minimal_signature
from fuzz.program.ir import NEUTRAL_FAMILY, NEUTRAL_OP, OpCall, Program, dtype_class, op_kind

MAX_CANDIDATES = 4  # projections tried per known form
MAX_TRIED = 12  # projections judged in all: a corpus of many bugs must not make every shrink slow


def _matches(p: Program, m: Program) -> list[list[int]]:
    """Ways to pick, in order, one op of p per op of m: the earliest fit, the
    latest fit and, for a one-op m, each op that fits. Lists of p's op indices."""
    want = [op_kind(c) for c in m.ops]
    have = [op_kind(c) for c in p.ops]

    def fits(i: int, j: int) -> bool:
        return have[i] == want[j] or want[j] == NEUTRAL_FAMILY  # any op can become NEUTRAL_OP

    def greedy(ps, ms) -> list | None:
        ms = iter(ms)
        j, picks = next(ms, None), []
        for i in ps:
            if j is None:
                break
            if fits(i, j):
                picks.append(i)
                j = next(ms, None)
        return sorted(picks) if j is None else None

    n, k = len(p.ops), len(want)
    out = [greedy(range(n), range(k)), greedy(reversed(range(n)), reversed(range(k)))]
    if k == 1:
        out += [[i] for i in range(n) if fits(i, 0)]
    res: list = []
    for o in out:
        if o is not None and o not in res:
            res.append(o)
    return res[:MAX_CANDIDATES]


def _as_features_of(q: Program, m: Program) -> Program | None:
    """q with every input feature and setting that m does not have reset to its
    default; None when m has a setting q lacks (no reduction gets there)."""
    want = m.minimal_parts()
    marks = set(want["marks"].split(",")) - {"-"}
    layouts = set(want["layout"].split(",")) - {"-"}
    classes = set(want["dtype"].split(",")) - {"-"}
    for x in q.inputs:
        if dtype_class(x.dtype) and dtype_class(x.dtype) not in classes:
            x.dtype = "float32"
        if x.layout != "contiguous" and x.layout not in layouts:
            x.layout, x.layout_dim = "contiguous", 0
        x.marks = [mk if ("unbacked" if mk == "unbacked" else "dynamic") in marks else "static" for mk in x.marks]
        if want["values"] == "-":
            x.scale = 1.0
    s, ms = q.settings, m.settings
    if ms.dynamic is not None and s.dynamic != ms.dynamic or ms.mode is not None and s.mode != ms.mode:
        return None
    if any(s.options.get(k, object()) != v for k, v in (ms.options or {}).items()):
        return None
    s.dynamic, s.mode, s.options = ms.dynamic, ms.mode, dict(ms.options or {})
    return _tidy(q)


def project(p: Program, m: Program) -> Iterator[tuple[str, Program]]:
    """Reductions of p with m's minimal parts (see the module docstring)."""
    target = m.minimal_parts()
    for picks in _matches(p, m):
        q = remove_ops(p, set(range(len(p.ops))) - set(picks), 0)
        for j, c in enumerate(q.ops):
            if op_kind(c) != op_kind(m.ops[j]) and op_kind(m.ops[j]) == NEUTRAL_FAMILY:
                q.ops[j] = OpCall(op=NEUTRAL_OP, args=[c.args[0]], params={}, out=c.out)
        used = {a for c in q.ops for a in c.args} | set(q.outputs)
        q.inputs = [x for x in q.inputs if x.name in used]
        q = _as_features_of(q, m) if q.inputs else None
        if q is not None and q.minimal_parts() == target:
            yield f"onto ops {picks}", q


def _key_edits(c: Program) -> Iterator[tuple[str, Program]]:
    """The shrink passes' candidates that change c's minimal parts."""
    parts = c.minimal_parts()
    for gen in (_pass_ops, _pass_neutral, _pass_attrs, _pass_params, _pass_settings):
        for what, q in gen(c):
            if q.ops and q.minimal_parts() != parts:  # no ops: nothing is compiled, never a finding
                yield what, q


def confirmed(engine: Engine, c: Program) -> bool:
    """No edit that changes what c's minimal signature names reproduces."""
    for _, q in _key_edits(c):
        if cost(q) < cost(c) and engine.reproduces(q)[0]:
            return False
    return True


def onto_stage(engine: Engine, targets: list) -> dict:
    """The prelude: for each (key, minimal program) in `targets`, try the
    projections of the current program; settle (raise Settled) on the first
    that reproduces with that key and is confirmed minimal. Returns figures."""
    stats = {"targets": len(targets), "tried": 0}
    for key, m in targets:
        for what, cand in project(engine.current, m):
            if cost(cand) >= engine.current_cost:
                continue
            if stats["tried"] >= MAX_TRIED:
                return stats
            stats["tried"] += 1
            ok, v = engine.reproduces(cand)
            if not ok or minimal_signature(v, cand).key != key:
                continue
            engine.accept(cand, v, "onto", f"{what} of {key}")
            if confirmed(engine, copy.deepcopy(cand)):
                raise Settled(key)
            return stats  # smaller, but not M's form: the passes go on from here
    return stats
