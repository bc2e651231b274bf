"""Shrinking a finding to a minimal program with the same signature.

`shrink(program, key)` applies IR-level reductions, cheapest and highest-yield
first, repeated to a fixpoint. A candidate counts only if it typechecks AND its
verdict has the pinned signature key, so shrinking never slides to another
bug. Every accepted step strictly lowers a well-founded cost (a tuple of
non-negative ints compared lexicographically: ops, inputs, total rank, calls,
symbols, sizes, attributes, params, ...), so the loop terminates, and a cache
keyed by canonical JSON means no program is evaluated twice.

Passes (in order, each resumed at its position after an accepted step):

  ops        delta debugging over the op list: drop chunks (n/2, n/4, ..., 1),
             uses of a dropped op's result rewired to its first argument (its
             second, for a single binary op) where shapes allow, else the
             dependent ops dropped too; outputs are recomputed as the leaves
  inputs     drop an unused input; merge an input into another value
  calls      keep only the failing call of the size schedule, else drop one call
  rank       drop a dim of an input (literal-1 dims first)
  symbols    merge one size symbol into another
  sizes      each size value (and literal dim) towards 1, 0, 2, 3, halving, -1, -2
  attrs      dtype -> float32, layout -> contiguous, marks -> static /
             maybe_dynamic, scale -> 1.0
  params     each op param towards its simplest value: pad mode -> constant,
             fewer pad pairs, widths -> small ints (size-relative -> literal),
             constants -> 0 / 1, casts -> float32, ...
  settings   dynamic -> None, mode -> None, options one key at a time, seed -> 0
  names      rename values to x0.., v0.. (cosmetic; last)

Flakiness: the final program is re-checked `reruns` more times; if it misses
the signature on any of them it is flaky, is kept out of the result (reported
as `flaky_program`), and the last accepted program that reproduces on every
re-check (or the original) is returned instead with `flaky=True`.

Value outcomes (divergence, input mutation, ...) carry no message, so their
signature includes the set of op families of the program (fuzz/signature.py).
Pinning the key therefore keeps one op per family of the original. With
`relax_families=True` a candidate also counts when its families are a
non-empty subset of the original's (everything else in the signature equal):
smaller programs, but the result may fall into a neighbouring bucket.

Hypothesis's own shrinker works on a choice sequence, and the public API
cannot turn a Program back into one (there is no way to seed `find` with a
known example). So Hypothesis runs only as an optional first stage
(`hypothesis_examples > 0`): `hypothesis.find` over `strategies.programs`
restricted to the finding's op names, families, dtypes, input count, rank and
op count, with its own shrinker; a match there is a case the strategies could
have produced, and if it is smaller than the finding the IR passes continue
from it. It only pays off for bugs dense in that restricted space (every
example is a full evaluation), so it is off by default; the IR passes are what
reach minimal forms (they also do what Hypothesis cannot: rewire data flow,
merge inputs and symbols, drop dims, turn size-relative widths into literals).

Crashes and hangs can only be shrunk in a sandbox: pass
`evaluate=pool_evaluator(WorkerPool(workers=1, rerun=False))`.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from fuzz.program.ir import MARKS, Program, ProgramError, TensorInput
from fuzz.kinds import is_step_file
from fuzz.findings.signature import Signature, in_bucket, signature
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.judge.poison import needs_isolation

Evaluate = Callable[[Program], Verdict]

DEFAULT_RERUNS = 3
_MARK_COST = {"static": 0, "maybe_dynamic": 1, "dynamic": 2, "unbacked": 3}
_MODE_COST = {"constant": 0, "replicate": 1, "reflect": 2, "circular": 3}


class _OutOfTime(Exception):
    pass


# -- evaluation ----------------------------------------------------------------

def evaluate_in_process(p: Program) -> Verdict:
    """The default evaluate: run_case in this process, without its rerun (the
    shrinker re-checks the final result itself)."""
    from fuzz.judge.runner import run_case

    return run_case(p, rerun=False)


def pool_evaluator(pool, timeout: float | None = None) -> Evaluate:
    """An evaluate function that judges each program in a WorkerPool (crashes
    and hangs become verdicts). Create the pool with rerun=False."""
    counter = iter(range(1 << 62))

    def evaluate(p: Program) -> Verdict:
        cid = ("shrink", next(counter))
        pool.submit(cid, p.to_dict(), timeout=timeout)
        for got, vd, _info in pool.results():
            if got == cid:
                return Verdict.from_dict(vd)
        raise RuntimeError("the worker pool returned no verdict")

    return evaluate


# -- measures --------------------------------------------------------------------

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


def _input_cost(x: TensorInput) -> int:
    c = (x.dtype != "float32") + 2 * (x.layout != "contiguous") + (x.layout_dim != 0) + (x.scale != 1.0)
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
    params = sum(_value_cost(c.params) for c in p.ops)
    return (len(p.ops), len(p.inputs), sum(len(x.shape) for x in p.inputs), p.calls, len(p.sizes), sizes,
            attrs, params, len(p.outputs), _names_off(p), len(canonical(p)))


# -- program edits -------------------------------------------------------------

def _leaves(p: Program) -> list:
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
    q.outputs = _leaves(q)
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


# -- the result ----------------------------------------------------------------

@dataclass
class ShrinkResult:
    original: Program
    program: Program  # the shrunk program (the original if nothing reproduced smaller)
    verdict: Verdict | None  # the shrunk program's verdict (None if the original did not reproduce)
    target_key: str
    signature: Signature | None = None  # of the shrunk program
    reproduced: bool = False  # the original reproduced the target signature
    evaluations: int = 0  # calls of evaluate (shrinking + re-checks)
    cache_hits: int = 0
    rejected_by_typecheck: int = 0
    seconds: float = 0.0
    timed_out: bool = False
    interrupted: bool = False  # Ctrl-C: the best program so far is kept
    flaky: bool = False
    flaky_program: Program | None = None  # a smaller program that reproduced only sometimes
    rechecks: list = field(default_factory=list)  # reproduced? per re-check of the result
    relax_families: bool = True
    hypothesis: dict = field(default_factory=dict)  # the optional Hypothesis stage's figures
    steps: list = field(default_factory=list)  # accepted steps, in order

    @property
    def ops_before(self) -> int:
        return len(self.original.ops)

    @property
    def ops_after(self) -> int:
        return len(self.program.ops)

    @property
    def inputs_before(self) -> int:
        return len(self.original.inputs)

    @property
    def inputs_after(self) -> int:
        return len(self.program.inputs)

    @property
    def max_rank_before(self) -> int:
        return max_rank(self.original)

    @property
    def max_rank_after(self) -> int:
        return max_rank(self.program)

    def stats(self) -> dict:
        return {"target_key": self.target_key, "reproduced": self.reproduced,
                "signature": self.signature.text if self.signature else None,
                "ops_before": self.ops_before, "ops_after": self.ops_after,
                "inputs_before": self.inputs_before, "inputs_after": self.inputs_after,
                "max_rank_before": self.max_rank_before, "max_rank_after": self.max_rank_after,
                "calls_before": self.original.calls, "calls_after": self.program.calls,
                "evaluations": self.evaluations, "cache_hits": self.cache_hits,
                "rejected_by_typecheck": self.rejected_by_typecheck, "seconds": round(self.seconds, 3),
                "timed_out": self.timed_out, "interrupted": self.interrupted, "flaky": self.flaky, "rechecks": list(self.rechecks),
                "relax_families": self.relax_families, "hypothesis": dict(self.hypothesis),
                "steps": len(self.steps)}

    def to_dict(self) -> dict:
        return {**self.stats(), "original": self.original.to_dict(), "program": self.program.to_dict(),
                "verdict": self.verdict.to_dict() if self.verdict else None,
                "flaky_program": self.flaky_program.to_dict() if self.flaky_program else None,
                "step_log": list(self.steps)}

    def summary(self) -> str:
        if not self.reproduced:
            return f"not reproduced: the program does not hit signature {self.target_key}"
        s = (f"ops {self.ops_before} -> {self.ops_after}, inputs {self.inputs_before} -> {self.inputs_after}, "
             f"max rank {self.max_rank_before} -> {self.max_rank_after}, calls {self.original.calls} -> "
             f"{self.program.calls}; {self.evaluations} evaluations, {self.seconds:.1f} s")
        if self.timed_out:
            s += " (time budget reached)"
        if self.flaky:
            s += " [FLAKY: a smaller program reproduced only sometimes; kept out]"
        return s


# -- the shrinker ----------------------------------------------------------------

class _Shrinker:
    def __init__(self, original: Program, key: str, evaluate: Evaluate, budget: float, relax_families: bool,
                 log: Callable[[str], None] | None):
        self.original = original
        self.key = key
        self.evaluate = evaluate
        self.deadline = time.monotonic() + budget
        self.relax = relax_families
        self.log = log or (lambda s: None)
        self.cache: dict[str, tuple] = {}  # canonical JSON -> (reproduced, verdict)
        self.evaluations = 0
        self.cache_hits = 0
        self.typecheck_rejects = 0
        self.steps: list = []
        self.history: list = []  # accepted (program, verdict), oldest first
        self.target_text: str | None = None
        self.started = time.monotonic()
        self.current = original
        self.current_cost = cost(original)
        self.current_verdict: Verdict | None = None

    # matching ----------------------------------------------------------------
    def _eval(self, p: Program) -> Verdict | None:
        self.evaluations += 1
        try:
            return self.evaluate(p)
        except ProgramError:
            return None
        except Exception as e:  # noqa: BLE001 - a harness error is a miss, not a reason to stop
            self.log(f"  evaluate raised {type(e).__name__}: {e}")
            return None

    def matches(self, v: Verdict | None, p: Program) -> bool:
        if v is None or not v.is_finding:
            return False
        sig = signature(v, p)
        if sig.key == self.key:
            return True
        return self.target_text is not None and in_bucket(sig.text, self.target_text, self.relax)

    def reproduces(self, p: Program) -> tuple[bool, Verdict | None]:
        """Cached: typecheck, then evaluate once."""
        k = canonical(p)
        if k in self.cache:
            self.cache_hits += 1
            return self.cache[k]
        from fuzz.program.typecheck import typecheck

        try:
            typecheck(p)
        except ProgramError:
            self.typecheck_rejects += 1
            self.cache[k] = (False, None)
            return False, None
        if time.monotonic() > self.deadline:
            raise _OutOfTime
        v = self._eval(p)
        ok = self.matches(v, p)
        self.cache[k] = (ok, v)
        return ok, v

    def accept(self, p: Program, v: Verdict | None, pass_name: str, what: str) -> None:
        self.current, self.current_cost = p, cost(p)
        if v is not None:
            self.current_verdict = v
        self.history.append((p, self.current_verdict))
        step = {"pass": pass_name, "what": what, "ops": len(p.ops), "inputs": len(p.inputs),
                "max_rank": max_rank(p), "calls": p.calls, "evaluation": self.evaluations,
                "t": round(time.monotonic() - self.started, 3)}
        self.steps.append(step)
        self.log(f"  [{pass_name}] {what} -> ops={step['ops']} inputs={step['inputs']} rank={step['max_rank']} "
                 f"calls={step['calls']}")

    def attempt(self, p: Program, pass_name: str, what: str) -> bool:
        if cost(p) >= self.current_cost:
            return False
        ok, v = self.reproduces(p)
        if ok:
            self.accept(p, v, pass_name, what)
        return ok

    # the loop ------------------------------------------------------------------
    def run_pass(self, name: str, gen: Callable[[Program], Iterator]) -> bool:
        progress = False
        pos = 0
        while True:
            accepted = False
            for j, (what, cand) in enumerate(gen(self.current)):
                if j < pos:
                    continue
                if self.attempt(cand, name, what):
                    pos, accepted, progress = j, True, True
                    break
            if not accepted:
                return progress

    def fixpoint(self) -> None:
        passes = [("ops", _pass_ops), ("inputs", _pass_inputs), ("calls", self._pass_calls), ("rank", _pass_rank),
                  ("symbols", _pass_symbols), ("sizes", _pass_sizes), ("attrs", _pass_attrs),
                  ("params", _pass_params), ("settings", _pass_settings), ("names", _pass_names)]
        while True:
            progress = False
            for name, gen in passes:
                progress |= self.run_pass(name, gen)
            if not progress:
                return

    def _pass_calls(self, p: Program) -> Iterator:
        if p.calls <= 1 or not p.sizes:
            return
        failing = self.current_verdict.call if self.current_verdict and self.current_verdict.call is not None else None
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

    # Hypothesis stage ------------------------------------------------------------
    def hypothesis_stage(self, examples: int, seed: int) -> dict:
        import random

        from hypothesis import HealthCheck, Phase, find, settings

        from strategies import programs

        from fuzz.program import dtypes as D
        from fuzz.program.opdb import OPS

        p = self.current
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
        before = self.evaluations

        def condition(q: Program) -> bool:
            if time.monotonic() > self.deadline:
                return False
            try:
                ok, v = self.reproduces(q)
            except _OutOfTime:
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
        stats["evaluations"] = self.evaluations - before
        if best:
            stats["found"] = True
            q, v = best[0]
            stats["ops"] = len(q.ops)
            if cost(q) < self.current_cost:
                self.accept(q, v, "hypothesis", "hypothesis.find over the restricted strategy")
                stats["accepted"] = True
        return stats


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
                    yield f"{x.name}: dim {d} {n} -> {w}", q


def _pass_attrs(p: Program) -> Iterator:
    for i, x in enumerate(p.inputs):
        def edit(**kw):
            q = copy.deepcopy(p)
            for k, v in kw.items():
                setattr(q.inputs[i], k, v)
            return _tidy(q)
        if x.dtype != "float32":
            yield f"{x.name}: dtype {x.dtype} -> float32", edit(dtype="float32")
        if x.layout != "contiguous":
            yield f"{x.name}: layout {x.layout} -> contiguous", edit(layout="contiguous", layout_dim=0)
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
    if s.options:
        q = copy.deepcopy(p)
        q.settings.options = {}
        yield "options -> {}", q
        for k in list(s.options):
            q = copy.deepcopy(p)
            del q.settings.options[k]
            yield f"options: drop {k}", q
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


# -- entry points ----------------------------------------------------------------

def shrink(program: Program, target_signature_key: str, *, evaluate: Evaluate | None = None,
           time_budget: float = 300.0, reruns: int = DEFAULT_RERUNS, relax_families: bool = True,
           hypothesis_examples: int = 0, hypothesis_seed: int = 0,
           log: Callable[[str], None] | None = None) -> ShrinkResult:
    """Shrink `program` while its verdict keeps signature `target_signature_key`.

    evaluate(program) -> Verdict defaults to run_case in this process (without
    its rerun); pass pool_evaluator(pool) for crashes and hangs. The budget
    bounds the shrinking; the final re-checks (`reruns` evaluations of the
    result) run after it. The original is evaluated first: if it does not
    reproduce (after up to `reruns` retries) the result has reproduced=False."""
    evaluate = evaluate or evaluate_in_process
    program = copy.deepcopy(program)
    sh = _Shrinker(program, target_signature_key, evaluate, time_budget, relax_families, log)
    res = ShrinkResult(original=program, program=program, verdict=None, target_key=target_signature_key,
                       relax_families=relax_families)
    v0 = None
    for _ in range(1 + max(0, reruns)):
        v = sh._eval(program)
        if v is not None and v.is_finding and signature(v, program).key == target_signature_key:
            v0 = v0 or v
            break
    if v0 is None:
        res.evaluations, res.seconds = sh.evaluations, time.monotonic() - sh.started
        return res
    sh.cache[canonical(program)] = (True, v0)
    sh.target_text = signature(v0, program).text
    sh.current_verdict = v0
    sh.history.append((program, v0))
    res.reproduced = True
    res.flaky = sh.evaluations > 1  # it needed retries to reproduce at all
    try:
        if hypothesis_examples > 0:
            res.hypothesis = sh.hypothesis_stage(hypothesis_examples, hypothesis_seed)
        sh.fixpoint()
    except _OutOfTime:
        res.timed_out = True
    except KeyboardInterrupt:
        res.timed_out = res.interrupted = True
    # Re-check the result; a program that misses on a re-check is flaky and is
    # kept out: walk back through the accepted programs (the last few, then the
    # original) to one that reproduces every time.
    hist = list(reversed(sh.history))
    walk = hist[:5] + ([hist[-1]] if len(hist) > 5 else [])
    chosen = None
    for p, v in walk:
        checks = [sh.matches(sh._eval(p), p) for _ in range(max(0, reruns))]
        if all(checks):
            chosen = (p, v, checks)
            break
        res.flaky = True
        if res.flaky_program is None:
            res.flaky_program, res.rechecks = p, checks
    if chosen is None:
        chosen = (program, v0, res.rechecks)
    p, v, checks = chosen
    if res.flaky_program is None:
        res.rechecks = checks
    res.program, res.verdict = p, v
    res.signature = signature(v, p)
    res.evaluations, res.cache_hits = sh.evaluations, sh.cache_hits
    res.rejected_by_typecheck = sh.typecheck_rejects
    idx = next(i for i, (q, _) in enumerate(sh.history) if q is p)
    res.steps = sh.steps[:idx]
    res.seconds = time.monotonic() - sh.started
    return res


# -- corpus entries ----------------------------------------------------------------

def _write_atomic(path: Path, text: str) -> None:
    from fuzz.findings import corpus

    corpus._write_atomic(path, text)


def shrink_entry(entry_dir, *, evaluate: Evaluate | None = None, time_budget: float = 300.0,
                 reruns: int = DEFAULT_RERUNS, backend: str | None = None, device: str | None = None,
                 sandbox: bool | None = None, timeout: float = 300.0, relax_families: bool = True,
                 hypothesis_examples: int = 0, write: bool = True,
                 log: Callable[[str], None] | None = None) -> ShrinkResult:
    """Shrink a corpus entry with its signature pinned and, when a smaller
    program reproduces reliably, replace its program.json, verdict.json and
    repro.py (each written atomically; the first original is kept as
    original_program.json) and record the figures under meta.json's "shrink".

    sandbox: evaluate in a one-worker WorkerPool (default: only for crash and
    hang findings, which would take this process down)."""
    from fuzz.findings import corpus as C

    entry_dir = Path(entry_dir)
    entry = C.Corpus(entry_dir.parent).load(entry_dir)
    p = copy.deepcopy(entry.program)
    if backend:
        p.settings.backend = backend
    if device:
        p.settings.device = device
    pool = None
    if evaluate is None:
        if sandbox is None:
            sandbox = needs_isolation(entry.verdict)
        if sandbox:
            from fuzz.campaign.workers import WorkerPool

            pool = WorkerPool(workers=1, timeout=timeout, rerun=False)
            evaluate = pool_evaluator(pool)
    try:
        res = shrink(p, entry.key, evaluate=evaluate, time_budget=time_budget, reruns=reruns,
                     relax_families=relax_families, hypothesis_examples=hypothesis_examples, log=log)
    finally:
        if pool is not None:
            pool.close()
    if write and res.reproduced and res.verdict is not None and canonical(res.program) != canonical(entry.program):
        _write_entry(entry, res)
    return res


def _write_entry(entry, res: ShrinkResult) -> None:
    from fuzz.findings import corpus as C

    d = entry.path
    if not (d / "original_program.json").exists():
        _write_atomic(d / "original_program.json", entry.program.to_json(indent=2) + "\n")
    _write_atomic(d / "program.json", res.program.to_json(indent=2) + "\n")
    _write_atomic(d / "verdict.json", C._dumps(res.verdict.to_dict()))
    repro, repro_error = C._repro(res.program, entry.signature)
    _write_atomic(d / "repro.py", repro)
    import fcntl

    with open(d / C._LOCK, "a") as lock:  # the corpus updates meta.json under this lock
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            meta = json.loads((d / "meta.json").read_text())
            stats = res.stats()
            stats["at"] = C._now()
            meta["shrink"] = stats
            if repro_error:
                meta["repro_error"] = repro_error
            else:
                meta.pop("repro_error", None)
            _write_atomic(d / "meta.json", C._dumps(meta))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# -- command line ------------------------------------------------------------------

def add_parser(subparsers) -> None:
    """Register `shapefuzz shrink CASE_OR_ENTRY [--time-budget S] [--backend B] [--json] ...`."""
    from fuzz.cli import parse_duration

    s = subparsers.add_parser(
        "shrink", help="shrink a finding (a program JSON or a corpus entry) with its signature pinned",
        description="A CASE (program JSON) is judged first and its signature pinned; the shrunk program is "
                    "written to -o (default CASE.shrunk.json). An ENTRY (corpus directory) keeps its "
                    "signature; its program.json, verdict.json and repro.py are replaced by the shrunk form "
                    "(original_program.json keeps the original). Exit 0: shrunk and reproduced; 2: bad input "
                    "or the finding does not reproduce.")
    s.add_argument("target", metavar="CASE_OR_ENTRY")
    s.add_argument("--time-budget", type=parse_duration, default=300.0, help="seconds of shrinking (default 300)")
    s.add_argument("--backend", help="override the program's backend")
    s.add_argument("--device", help="override the program's device")
    s.add_argument("--reruns", type=int, default=DEFAULT_RERUNS, help="re-checks of the result (flakiness)")
    s.add_argument("--sandbox", action="store_true", default=None,
                   help="evaluate in a worker process (default for crash/hang entries)")
    s.add_argument("--timeout", type=parse_duration, default=300.0, help="per case, in the sandbox")
    s.add_argument("--exact-families", dest="relax_families", action="store_false",
                   help="keep every op family of a value finding (its exact signature key)")
    s.add_argument("--relax-families", action="store_true", default=True,
                   help="value outcomes: accept programs with a subset of the op families")
    s.add_argument("--hypothesis", type=int, default=0, metavar="N",
                   help="first run hypothesis.find with N examples over the restricted strategy")
    s.add_argument("-o", "--output", help="CASE: where to write the shrunk program")
    s.add_argument("--dry-run", action="store_true", help="ENTRY: do not rewrite the entry")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.add_argument("-v", "--verbose", action="store_true", help="print every accepted step")
    s.set_defaults(fn=cmd_shrink)


def cmd_shrink(args) -> int:
    from fuzz.judge.backends import BackendError, resolve

    log = (lambda m: print(m, file=sys.stderr, flush=True)) if args.verbose else None
    target = Path(args.target)
    if is_step_file(target):
        return _cmd_shrink_steps(target, args)
    if target.is_dir():
        res = shrink_entry(target, time_budget=args.time_budget, reruns=args.reruns, backend=args.backend,
                           device=args.device, sandbox=args.sandbox, timeout=args.timeout,
                           relax_families=args.relax_families, hypothesis_examples=args.hypothesis,
                           write=not args.dry_run, log=log)
        out = None
    else:
        from fuzz.cli import _load_case, _override

        p = _override(_load_case(str(target)), args)
        try:
            resolve(p.settings.backend)
        except BackendError as e:
            print(f"shapefuzz: {e}", file=sys.stderr)
            return 2
        pool = None
        evaluate = None
        if args.sandbox:
            from fuzz.campaign.workers import WorkerPool

            pool = WorkerPool(workers=1, timeout=args.timeout, rerun=False)
            evaluate = pool_evaluator(pool)
        try:
            v = (evaluate or evaluate_in_process)(p)
            if not v.is_finding:
                print(f"{target}: {v.summary()}: not a finding, nothing to shrink", file=sys.stderr)
                return 2
            res = shrink(p, signature(v, p).key, evaluate=evaluate, time_budget=args.time_budget,
                         reruns=args.reruns, relax_families=args.relax_families,
                         hypothesis_examples=args.hypothesis, log=log)
        finally:
            if pool is not None:
                pool.close()
        out = Path(args.output) if args.output else target.with_suffix(".shrunk.json")
        if res.reproduced:
            tmp = out.with_name(f".{out.name}.tmp")
            tmp.write_text(res.program.to_json(indent=2) + "\n")
            os.replace(tmp, out)
    if args.json:
        print(json.dumps(res.to_dict(), indent=1))
    else:
        print(f"{target}: {res.summary()}")
        if res.reproduced:
            print(f"  signature: {res.signature.text if res.signature else '-'}")
            if out is not None:
                print(f"  shrunk program: {out}")
            elif not args.dry_run:
                print(f"  entry updated: {target}/program.json (original in original_program.json)")
    return 0 if res.reproduced else 2



def _cmd_shrink_steps(target: Path, args) -> int:
    """`shapefuzz shrink` of a torch_xla step program: fuzz/xla/shrink.py,
    every candidate in a fresh process."""
    from fuzz.cli import _load_case
    from fuzz.findings.shrink_steps import fresh_evaluator, shrink_step_entry, shrink_steps

    try:
        if target.is_dir():
            res = shrink_step_entry(target, time_budget=args.time_budget, reruns=args.reruns,
                                    write=not args.dry_run)
            out = None
        else:
            p = _load_case(str(target), steps_ok=True)
            res = shrink_steps(p, fresh_evaluator(args.timeout), time_budget=args.time_budget)
            out = Path(args.output) if args.output else target.with_suffix(".shrunk.json")
            tmp = out.with_name(f".{out.name}.tmp")
            tmp.write_text(res.program.to_json(indent=2) + "\n")
            os.replace(tmp, out)
    except ValueError as e:  # a bad case (ProgramError), not a finding, another bug, flaky
        print(f"{target}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({**res.stats(), "key": res.key, "verdict": res.verdict.to_dict()}, indent=1))
    else:
        print(f"{target}: {res.summary()}")
        print(f"  verdict: {res.verdict.summary()}")
        if out is not None:
            print(f"  shrunk program: {out}")
        elif not args.dry_run:
            print(f"  entry updated: {target}/program.json (original in original_program.json)")
    return 0
