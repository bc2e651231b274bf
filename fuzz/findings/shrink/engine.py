"""The shrink engine: one loop for every kind of program.

A kind (a ShrinkKind: compiled Programs in fuzz/findings/shrink/compiled.py,
torch_xla step programs in fuzz/findings/shrink/steps.py) supplies candidate
passes, a cost, a canonical form and a validity check; the engine owns the
rest:

- pinning: a candidate counts only if it is valid AND its verdict has the
  pinned signature key (or, with `relax_families`, falls in the pinned bucket:
  signature.in_bucket; an original whose mismatching output aliases a
  mismatching input also admits the input mismatch alone:
  signature.alias_bucket; a shape mismatch out of a data-dependent op
  admits the divergence upstream of it: signature.upstream_buckets), so a
  shrink never slides to another bug;
- the cache: every program is judged at most once, keyed by its canonical
  JSON (invalid ones are cached as misses without being judged);
- the fixpoint: passes run in order, each generating (what, candidate) from
  the current program; a candidate is tried only if it strictly lowers the
  cost (a tuple of non-negative ints compared lexicographically), so every
  accepted step lowers a well-founded measure and the loop terminates. After
  an accepted step a pass resumes at its position, or, for kinds with
  `restart`, the sweep starts over from the first pass;
- the time budget, which bounds the shrinking (the re-checks run after it),
  and Ctrl-C, which keeps the best program so far;
- flakiness: the result is re-checked `reruns` more times; if it misses the
  signature on any of them it is kept out (reported as `flaky_program`) and
  the last accepted program that reproduces on every re-check (or the
  original) is returned instead, with `flaky=True`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

from fuzz.findings.signature import Signature, alias_bucket, aliases_input, in_bucket, signature, upstream_buckets
from fuzz.judge.verdict import Verdict
from fuzz.program.ir import ProgramError

DEFAULT_RERUNS = 3  # re-checks of a shrink's result (and tries of its original)

Evaluate = Callable[[Any], Verdict]
Pass = Callable[[Any], Iterator[tuple[str, Any]]]  # program -> (what, candidate), in the order tried


class OutOfTime(Exception):
    pass


class Settled(Exception):
    """Raised by a prelude that reached a known minimal form (fuzz/findings/
    shrink/onto.py): the passes are skipped and the result re-checked once."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class ShrinkKind(Protocol):
    """What the engine needs to know about one kind of program."""

    restart: bool  # after an accepted step, sweep again from the first pass (else resume the pass)

    def passes(self, engine: "Engine") -> list[tuple[str, Pass]]:
        """Named passes in order; a pass may read engine state (the current verdict)."""

    def cost(self, p) -> tuple:
        """Every candidate a pass yields must cost less than the program it came from."""

    def canonical(self, p) -> str:
        """The cache key: equal for programs that are judged the same."""

    def check(self, p) -> None:
        """Raise ProgramError if `p` is not a valid program (it is then never judged)."""

    def measures(self, p) -> dict:
        """name -> int sizes reported before/after (`ops`, `steps`, ...), in order."""


# -- the result ----------------------------------------------------------------

def _measure(name: str, before: bool) -> property:
    return property(lambda self: self.kind.measures(self.original if before else self.program)[name])


@dataclass
class ShrinkResult:
    original: Any
    program: Any  # the shrunk program (the original if nothing reproduced smaller)
    verdict: Verdict | None  # the shrunk program's verdict (None if the original did not reproduce)
    target_key: str | None  # the signature key pinned
    signature: Signature | None = None  # of the shrunk program
    reproduced: bool = False  # the original reproduced the target signature
    evaluations: int = 0  # calls of evaluate (shrinking + re-checks)
    cache_hits: int = 0
    rejected_by_typecheck: int = 0
    seconds: float = 0.0
    timed_out: bool = False
    interrupted: bool = False  # Ctrl-C: the best program so far is kept
    flaky: bool = False
    flaky_program: Any = None  # a smaller program that reproduced only sometimes
    rechecks: list = field(default_factory=list)  # reproduced? per re-check of the result
    relax_families: bool = True
    hypothesis: dict = field(default_factory=dict)  # the optional Hypothesis stage's figures (compiled kind)
    steps: list = field(default_factory=list)  # accepted steps, in order
    target_text: str | None = None  # the signature text pinned (the bucket of in_bucket)
    onto: str | None = None  # the key of the known minimal form a prelude settled on, if it did
    original_verdict: Verdict | None = None  # the original's verdict (its last try when it did not reproduce)
    error: str | None = None  # why evaluate raised on the original's last try, if it did
    steadied: str | None = None  # the steadier whose options were pinned (fuzz/findings/steadying.py)
    shrunk_with: str | None = None  # a cheaper backend that shrank it (the program's own confirmed the result)
    kind: Any = field(default=None, repr=False, compare=False)

    # older names: the step shrinker's result had these
    key = property(lambda self: self.target_key)
    target = property(lambda self: self.target_text)
    accepted = property(lambda self: [s["what"] for s in self.steps])

    ops_before, ops_after = _measure("ops", True), _measure("ops", False)
    inputs_before, inputs_after = _measure("inputs", True), _measure("inputs", False)
    max_rank_before, max_rank_after = _measure("max_rank", True), _measure("max_rank", False)
    steps_before, steps_after = _measure("steps", True), _measure("steps", False)

    def stats(self) -> dict:
        d = {"target_key": self.target_key, "reproduced": self.reproduced,
             "signature": self.signature.text if self.signature else None}
        before, after = self.kind.measures(self.original), self.kind.measures(self.program)
        for k in before:
            d[f"{k}_before"], d[f"{k}_after"] = before[k], after[k]
        d.update({"evaluations": self.evaluations, "cache_hits": self.cache_hits,
                  "rejected_by_typecheck": self.rejected_by_typecheck, "seconds": round(self.seconds, 3),
                  "timed_out": self.timed_out, "interrupted": self.interrupted, "flaky": self.flaky,
                  "rechecks": list(self.rechecks), "relax_families": self.relax_families,
                  "hypothesis": dict(self.hypothesis), "steps": len(self.steps), "accepted": self.accepted})
        if self.onto:
            d["onto"] = self.onto
        if self.steadied:
            d["steadied"] = self.steadied
        if self.shrunk_with:
            d["shrunk_with"] = self.shrunk_with
        return d

    def to_dict(self) -> dict:
        return {**self.stats(), "original": self.original.to_dict(), "program": self.program.to_dict(),
                "verdict": self.verdict.to_dict() if self.verdict else None,
                "flaky_program": self.flaky_program.to_dict() if self.flaky_program else None,
                "step_log": list(self.steps)}

    def summary(self) -> str:
        if not self.reproduced:
            return f"not reproduced: the program does not hit signature {self.target_key}"
        before, after = self.kind.measures(self.original), self.kind.measures(self.program)
        s = ", ".join(f"{k.replace('_', ' ')} {before[k]} -> {after[k]}" for k in before)
        s += f"; {self.evaluations} evaluations, {self.seconds:.1f} s"
        if self.timed_out:
            s += " (time budget reached)"
        if self.onto:
            s += f" (onto the known minimal form {self.onto})"
        if self.steadied:
            s += f" (with {self.steadied}'s timed decision forced, and kept)"
        if self.flaky:
            s += " [FLAKY: a smaller program reproduced only sometimes; kept out]"
        return s


# -- the engine ----------------------------------------------------------------

class Engine:
    """One shrink of one program. `key` pins the signature key the original
    must have (None: any finding in bucket `target_text`); `target_text`
    pins the bucket (None: the original's signature text)."""

    def __init__(self, kind: ShrinkKind, evaluate: Evaluate, *, key: str | None = None,
                 target_text: str | None = None, relax_families: bool = True, time_budget: float = 300.0,
                 log: Callable[[str], None] | None = None):
        self.kind = kind
        self.evaluate = evaluate
        self.key = key
        self.target_text = target_text
        self.relax = relax_families
        self.log = log or (lambda s: None)
        self.started = time.monotonic()
        self.deadline = self.started + time_budget
        self.cache: dict[str, tuple] = {}  # canonical JSON -> (reproduced, verdict)
        self.evaluations = 0
        self.cache_hits = 0
        self.typecheck_rejects = 0
        self.steps: list = []
        self.history: list = []  # accepted (program, verdict), oldest first
        self.current = None
        self.current_cost: tuple = ()
        self.current_verdict: Verdict | None = None
        self.last_error: str | None = None
        # other buckets whose findings reproduce the original's bug: an input mismatch alone when
        # its mismatching output aliases that input (signature.alias_bucket), a divergence when its
        # shape mismatch came out of a data-dependent op (signature.upstream_buckets)
        self.also_texts: list = []

    # judging --------------------------------------------------------------------
    def judge(self, p) -> Verdict | None:
        """evaluate(p), uncached; None when it raised."""
        self.evaluations += 1
        self.last_error = None
        try:
            return self.evaluate(p)
        except ProgramError as e:
            self.last_error = f"{type(e).__name__}: {e}"
            return None
        except Exception as e:  # noqa: BLE001 - a harness error is a miss, not a reason to stop
            self.last_error = f"{type(e).__name__}: {e}"
            self.log(f"  evaluate raised {self.last_error}")
            return None

    def matches(self, v: Verdict | None, p) -> bool:
        if v is None or not v.is_finding:
            return False
        sig = signature(v, p)
        if sig.key == self.key:
            return True
        if any(in_bucket(sig.text, t, self.relax) for t in self.also_texts):
            return True
        return self.target_text is not None and in_bucket(sig.text, self.target_text, self.relax)

    def _original_matches(self, v: Verdict | None, p) -> bool:
        if v is None or not v.is_finding:
            return False
        sig = signature(v, p)
        if self.key is not None and sig.key != self.key:
            return False
        return self.target_text is None or in_bucket(sig.text, self.target_text, self.relax)

    def reproduces(self, p) -> tuple[bool, Verdict | None]:
        """Cached: check, then evaluate once."""
        k = self.kind.canonical(p)
        if k in self.cache:
            self.cache_hits += 1
            return self.cache[k]
        try:
            self.kind.check(p)
        except ProgramError:
            self.typecheck_rejects += 1
            self.cache[k] = (False, None)
            return False, None
        if time.monotonic() > self.deadline:
            raise OutOfTime
        v = self.judge(p)
        ok = self.matches(v, p)
        self.cache[k] = (ok, v)
        return ok, v

    # the loop -------------------------------------------------------------------
    def accept(self, p, v: Verdict | None, pass_name: str, what: str) -> None:
        self.current, self.current_cost = p, self.kind.cost(p)
        if v is not None:
            self.current_verdict = v
        self.history.append((p, self.current_verdict))
        m = self.kind.measures(p)
        self.steps.append({"pass": pass_name, "what": what, **m, "evaluation": self.evaluations,
                           "t": round(time.monotonic() - self.started, 3)})
        self.log(f"  [{pass_name}] {what} -> " + " ".join(f"{k}={n}" for k, n in m.items()))

    def attempt(self, p, pass_name: str, what: str) -> bool:
        if self.kind.cost(p) >= self.current_cost:
            return False
        ok, v = self.reproduces(p)
        if ok:
            self.accept(p, v, pass_name, what)
        return ok

    def run_pass(self, name: str, gen: Pass) -> bool:
        """Run one pass over the current program until it finds nothing;
        with `restart`, stop at its first accepted step."""
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
            if not accepted or self.kind.restart:
                return progress

    def fixpoint(self) -> None:
        passes = self.kind.passes(self)
        while True:
            progress = False
            for name, gen in passes:
                if self.run_pass(name, gen):
                    progress = True
                    if self.kind.restart:
                        break
            if not progress:
                return

    # one shrink -------------------------------------------------------------------
    def run(self, program, *, reruns: int, prelude: Callable[["Engine"], None] | None = None) -> ShrinkResult:
        """Shrink `program` (not copied: pass a copy if the caller keeps it).
        The original gets 1 + `reruns` tries to reproduce; `prelude(engine)`
        runs before the passes, within the budget (the Hypothesis stage)."""
        self.current, self.current_cost = program, self.kind.cost(program)
        res = ShrinkResult(original=program, program=program, verdict=None, target_key=self.key,
                           relax_families=self.relax, kind=self.kind)
        v0 = None
        for _ in range(1 + max(0, reruns)):
            v = self.judge(program)
            res.original_verdict, res.error = v, self.last_error
            if self._original_matches(v, program):
                v0 = v
                break
        if v0 is None:
            res.evaluations, res.seconds = self.evaluations, time.monotonic() - self.started
            return res
        sig0 = signature(v0, program)
        self.key = res.target_key = self.key or sig0.key
        self.target_text = res.target_text = self.target_text or sig0.text
        self.also_texts = ([alias_bucket(self.target_text)] if aliases_input(v0) else []) \
            + upstream_buckets(self.target_text)
        self.cache[self.kind.canonical(program)] = (True, v0)
        self.current_verdict = v0
        self.history.append((program, v0))
        res.reproduced = True
        res.flaky = self.evaluations > 1  # it needed retries to reproduce at all
        try:
            if prelude is not None:
                prelude(self)
            self.fixpoint()
        except Settled as s:
            res.onto, reruns = s.key, min(reruns, 1)
        except OutOfTime:
            res.timed_out = True
        except KeyboardInterrupt:
            res.timed_out = res.interrupted = True
        self._recheck(res, program, v0, reruns)
        if res.flaky:
            res.onto = None  # the settled form did not hold on its re-check
        res.evaluations, res.cache_hits = self.evaluations, self.cache_hits
        res.rejected_by_typecheck = self.typecheck_rejects
        res.seconds = time.monotonic() - self.started
        return res

    def _recheck(self, res: ShrinkResult, program, v0: Verdict, reruns: int) -> None:
        """Re-check the result; a program that misses on a re-check is flaky and
        is kept out: walk back through the accepted programs (the last few,
        then the original) to one that reproduces every time."""
        hist = list(reversed(self.history))
        walk = hist[:5] + ([hist[-1]] if len(hist) > 5 else [])
        chosen = None
        for p, v in walk:
            checks = [self.matches(self.judge(p), p) for _ in range(max(0, reruns))]
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
        idx = next(i for i, (q, _) in enumerate(self.history) if q is p)
        res.steps = self.steps[:idx]
