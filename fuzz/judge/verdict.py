"""Typed outcomes of one case. A Verdict is plain data (JSON round trip)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


class Outcome(str, Enum):
    OK = "ok"
    # findings: compiled and eager disagree
    DIVERGENCE = "divergence"  # values differ beyond the float64 rule
    NONFINITE = "nonfinite"  # NaN/inf positions differ
    SHAPE = "shape-mismatch"
    DTYPE = "dtype-mismatch"
    STRIDE = "stride-mismatch"
    INPUT_MUTATION = "input-mutation-mismatch"
    COMPILED_ERROR = "compiled-only-error"  # compiled raises, eager does not
    EAGER_ERROR = "eager-only-error"  # eager raises, compiled silently returns
    CRASH = "crash"  # the process died (signal, CUDA error)
    HANG = "hang"  # no answer within the time limit
    # not findings
    REJECTED = "rejected"  # the compiler refused what was asked, by design (see expected.py)
    INVALID = "invalid"  # eager and compiled both raise: the program is invalid
    FLAKY = "flaky"  # the outcome changed on rerun

    @property
    def is_finding(self) -> bool:
        return self not in (Outcome.OK, Outcome.REJECTED, Outcome.INVALID, Outcome.FLAKY)


class Stage(str, Enum):
    COMPILE = "compile"  # raised while Dynamo/AOT/the backend compiled
    EXECUTE = "execute"  # raised or went wrong while running compiled code
    COMPARE = "compare"  # ran fine, results differ
    PROCESS = "process"  # the worker process crashed or hung


@dataclass
class Verdict:
    outcome: Outcome
    stage: Stage | None = None
    call: int | None = None  # index into the size schedule
    sizes: dict = field(default_factory=dict)  # the sizes at that call
    where: str = ""  # "output 1", "input x0", ...
    exc_type: str = ""  # qualified name of the innermost exception
    message: str = ""
    frames: list = field(default_factory=list)  # innermost-last "file:line:function" of the traceback
    numbers: dict = field(default_factory=dict)  # max_abs, max_rel, compiled_vs_fp64, eager_vs_fp64, ...
    rule: str = ""  # the expected-error rule that matched, for REJECTED
    recompiles: int = 0  # graphs compiled over the whole schedule
    seconds: float = 0.0
    compile_seconds: float = 0.0  # time of the first compiled call (compile included)

    @property
    def is_finding(self) -> bool:
        return self.outcome.is_finding

    def to_dict(self) -> dict:
        d = asdict(self)
        d["outcome"] = self.outcome.value
        d["stage"] = self.stage.value if self.stage else None
        return d

    @staticmethod
    def from_dict(d: dict) -> "Verdict":
        d = dict(d)
        d["outcome"] = Outcome(d["outcome"])
        d["stage"] = Stage(d["stage"]) if d.get("stage") else None
        return Verdict(**d)

    def summary(self) -> str:
        s = self.outcome.value
        if self.call is not None:
            s += f" at call {self.call} {self.sizes}"
        if self.where:
            s += f", {self.where}"
        if self.exc_type:
            s += f": {self.exc_type}: {self.message.splitlines()[0][:200] if self.message else ''}"
        elif self.message:
            s += f": {self.message[:200]}"
        if self.numbers:
            s += " (" + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                  for k, v in self.numbers.items()) + ")"
        return s
