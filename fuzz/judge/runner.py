"""Run one case in this process: eager, eager in float64, and compiled over
the whole size schedule, judged by fuzz.judge.compare. Returns a Verdict.

Crashes and hangs cannot be caught here; the worker pool (fuzz/workers.py)
runs this in a child process and turns those into verdicts.
"""

from __future__ import annotations

import os
import tempfile
import time

from fuzz.judge import expected
from fuzz.judge.backends import compile_program
from fuzz.judge.compare import compare_outputs
from fuzz.judge.poison import judge_twice
from fuzz.program.interp import load
from fuzz.program.ir import Program
from fuzz.program.typecheck import typecheck
from fuzz.judge.verdict import COMPARE_OUTCOME, Outcome, Stage, Verdict, error_verdict, exception_chain

_prepared = False


def prepare_process() -> None:
    """Once per process: a private Inductor cache, no TF32, deterministic
    random ops, quiet compiler logs."""
    global _prepared
    if _prepared:
        return
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="shapefuzz-inductor-"))
    import logging
    import warnings

    import torch
    import torch._inductor.config as inductor_config

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    inductor_config.fallback_random = True
    warnings.filterwarnings("ignore")
    torch._logging.set_logs(all=logging.CRITICAL)
    logging.getLogger("torch").setLevel(logging.CRITICAL)
    _prepared = True


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _run_once(p: Program, check_strides: bool) -> Verdict:
    import torch
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    prog = load(p)
    marks = {m for x in p.inputs for m in x.marks}
    graphs_before = counters["stats"]["unique_graphs"]
    compiled = compile_program(prog.program, p.settings)
    start = time.perf_counter()
    compile_s = 0.0

    def done(v: Verdict) -> Verdict:
        v.recompiles = counters["stats"]["unique_graphs"] - graphs_before
        v.seconds = time.perf_counter() - start
        v.compile_seconds = compile_s
        return v

    for call in range(p.calls):
        at = dict(call=call, sizes=p.sizes_at(call))
        eager_exc = ref64 = ref_in = None
        try:
            eager_in = prog.make_inputs(call)
            expected_out = prog.program(*eager_in)
        except Exception as e:  # noqa: BLE001 - any eager error is data
            eager_exc = e
        try:
            ref_in = prog.make_inputs(call, fp64=True)
            ref64 = prog.program(*ref_in)
        except Exception:  # noqa: BLE001
            ref_in = ref64 = None
        comp_in = prog.make_inputs(call)
        prog.mark_inputs(*comp_in)
        t = time.perf_counter()
        try:
            actual = compiled(*comp_in)
            _sync(p.settings.device)
            comp_exc = None
        except Exception as e:  # noqa: BLE001
            comp_exc = e
        if call == 0:
            compile_s = time.perf_counter() - t
        if comp_exc is not None and eager_exc is not None:
            return done(error_verdict(Outcome.INVALID, eager_exc, **at))
        if eager_exc is not None:
            return done(error_verdict(Outcome.EAGER_ERROR, eager_exc, **at))
        if comp_exc is not None:
            chain = [(type(x).__name__, str(x)) for x in exception_chain(comp_exc)]
            rule = expected.match(chain, marks)
            v = error_verdict(Outcome.REJECTED if rule else Outcome.COMPILED_ERROR, comp_exc, **at)
            v.rule = rule.name if rule else ""
            return done(v)
        bad = compare_outputs(actual, expected_out, ref64)
        if bad:
            i, kind, detail = bad[0]
            where = f"output {i} ({p.outputs[i]})" if 0 <= i < len(p.outputs) else "outputs"
            return done(Verdict(outcome=COMPARE_OUTCOME[kind], stage=Stage.COMPARE, where=where,
                                message=f"{kind} mismatch: {detail}" if kind != "values" else "",
                                numbers={k: v for k, v in detail.items() if isinstance(v, (int, float))}, **at))
        bad = compare_outputs(comp_in, eager_in, ref_in)
        if bad:
            i, kind, detail = bad[0]
            return done(Verdict(outcome=Outcome.INPUT_MUTATION, stage=Stage.COMPARE,
                                where=f"input {p.inputs[i].name}", message=f"{kind} mismatch after the call",
                                numbers={k: v for k, v in detail.items() if isinstance(v, (int, float))}, **at))
        if check_strides:
            for i, (a, e) in enumerate(zip(actual, expected_out)):
                if isinstance(a, torch.Tensor) and _strides(a) != _strides(e):
                    return done(Verdict(outcome=Outcome.STRIDE, stage=Stage.COMPARE, where=f"output {i}",
                                        message=f"strides {a.stride()} vs eager {e.stride()}", **at))
    return done(Verdict(outcome=Outcome.OK))


def _strides(t) -> tuple:
    """Strides of dims longer than 1 (others are arbitrary)."""
    return tuple(s for s, n in zip(t.stride(), t.shape) if n > 1)


def run_case(p: Program, *, rerun: bool = True, check_strides: bool = False) -> Verdict:
    """Judge one program. A finding is rerun once (unless the first run
    poisoned the process, fuzz.judge.poison); if the rerun disagrees the
    verdict is FLAKY (not reported as a bug). Raises ProgramError for an
    invalid program."""
    typecheck(p)
    prepare_process()
    return judge_twice(lambda: _run_once(p, check_strides), rerun)
