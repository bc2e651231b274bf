"""Typed outcomes of one case. A Verdict is plain data (JSON round trip).

Also what every judge (compiled programs, torch_xla step programs) shares to
build one: the outcome of each comparison kind and the verdict of an error."""

from __future__ import annotations

import traceback
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
    GRADIENT = "gradient-mismatch"  # outputs agree, gradients do not
    RECOMPILE = "unexpected-recompile"  # a call that should have reused the compiled graph compiled anew
    INPUT_MUTATION = "input-mutation-mismatch"
    # values agree, an output shares storage with an input (or another output) where eager's is fresh, or the
    # other way round: a later in-place use of it writes the caller's tensor, or fails to
    ALIASING = "aliasing-mismatch"
    COMPILED_ERROR = "compiled-only-error"  # compiled raises, eager does not
    EAGER_ERROR = "eager-only-error"  # eager raises, compiled silently returns
    CRASH = "crash"  # the process died (signal, CUDA error)
    HANG = "hang"  # no answer within the time limit
    # not findings
    REJECTED = "rejected"  # the compiler refused what was asked, by design (see expected.py)
    INVALID = "invalid"  # eager and compiled both raise: the program is invalid
    FLAKY = "flaky"  # failed once, passed on rerun (failing again another way is a nondeterministic finding)
    SKIPPED = "skipped"  # not judged: a program like it hung in this campaign (fuzz/campaign/workers.py)

    @property
    def is_finding(self) -> bool:
        return self not in (Outcome.OK, Outcome.REJECTED, Outcome.INVALID, Outcome.FLAKY, Outcome.SKIPPED)


class Stage(str, Enum):
    COMPILE = "compile"  # raised while Dynamo/AOT/the backend compiled
    EXECUTE = "execute"  # raised or went wrong while running compiled code
    COMPARE = "compare"  # ran fine, results differ
    PROCESS = "process"  # the worker process crashed or hung


def scalar_numbers(detail: dict) -> dict:
    """What a verdict keeps of a comparison's detail: its numbers. A shape, a dtype or a repr there is told by
    the verdict's message; corpus files hold only numbers (and short texts) under `numbers`."""
    return {k: v for k, v in detail.items() if isinstance(v, (int, float))}


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


# compare.py's mismatch kinds -> outcome. A wrong type or number of results is
# a shape-like structural mismatch, not a value divergence.
COMPARE_OUTCOME = {"values": Outcome.DIVERGENCE, "nonfinite": Outcome.NONFINITE, "shape": Outcome.SHAPE,
                   "arity": Outcome.SHAPE, "type": Outcome.SHAPE, "dtype": Outcome.DTYPE}

# Exceptions raised by the compiler stack itself (class names, any module).
_COMPILE_EXCEPTIONS = {
    "BackendCompilerFailed", "InductorError", "LoweringException", "Unsupported", "TorchRuntimeError",
    "InternalTorchDynamoError", "ConstraintViolationError", "UserError", "GuardOnDataDependentSymNode",
    "CompilationError", "CppCompileError",
}


def exception_chain(e: BaseException) -> list[BaseException]:
    """e and what it wraps (cause, context, inner_exception), outermost first."""
    chain, seen = [], set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.append(e)
        e = getattr(e, "inner_exception", None) or e.__cause__ or e.__context__
    return chain


def _frame_text(f) -> str:
    path = f.filename
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{path}:{f.lineno}:{f.name}"


def error_verdict(outcome: Outcome, e: BaseException, stage: Stage | None = None, **kw) -> Verdict:
    """The verdict of an error: the innermost exception of e's chain (type,
    message, frames). Stage COMPILE when the compiler stack raised anywhere
    in the chain, else EXECUTE, unless `stage` is given."""
    chain = exception_chain(e)
    inner = chain[-1]
    message = str(inner)
    compiler = _compiler_error(chain)
    if compiler is not None:  # the C++ compiler's diagnostic, not the command line that ran it
        inner, message = compiler
    frames = [_frame_text(f) for f in traceback.extract_tb(inner.__traceback__)]
    if stage is None:
        stage = Stage.COMPILE if any(type(x).__name__ in _COMPILE_EXCEPTIONS for x in chain) else Stage.EXECUTE
    return Verdict(outcome=outcome, stage=stage, exc_type=type(inner).__qualname__, message=message[:4000],
                   frames=frames[-30:], **kw)


def _compiler_error(chain: list) -> tuple[BaseException, str] | None:
    """(the CppCompileError, its compiler's first `error:` diagnostic, without the temp file's path) where
    Inductor's C++ build failed: the innermost exception there is the CalledProcessError whose text is
    the command line, temp paths and flags, the same for every such bug; the diagnostic tells them apart
    and is what a standalone run prints too."""
    for x in chain:
        output = getattr(x, "output", None)
        if type(x).__name__ == "CppCompileError" and isinstance(output, str):
            for line in output.splitlines():
                _, sep, rest = line.partition("error: ")
                if sep:
                    return x, "error: " + rest.strip()
            return x, output.strip().splitlines()[-1] if output.strip() else str(x)
    return None
