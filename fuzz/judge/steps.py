"""Run a StepProgram on the XLA device and in eager on CPU; judge every
observation with fuzz.judge.compare.

torch_xla is imported lazily, so this module loads without it. Programs whose
settings need env knobs (read by torch_xla at import) run in a fresh process:
`python -m fuzz.judge.steps` reads {"program", "fault"} JSON on stdin and
prints the verdict as its last line.

Planted faults (for testing the oracle, never for real runs) wrap the XLA
side's observe hook:
- "stale-after-sync": a tensor read again returns the value of its first
  read, as if a sync had not refreshed it;
- "cached-result": reads are served from a process-wide cache keyed by shape
  and dtype only, like an executable cache whose key misses what the graph
  computes (the seed's bug); it serves results of other programs too;
- "wrong-on-as-strided": in a program with an as_strided view, every read is
  off by one, as if the view's lowering were wrong (step programs once
  had no as_strided; the generator must reach it and the oracle see it);
- "wrong-on-offset-as-strided": the same, only in a program with an as_strided
  of a select or slice taking the implicit storage offset (a window must
  start at the view's offset, past element 0; pytorch/xla#7859).
"""

from __future__ import annotations

import gc
import hashlib
import json
import linecache
import os
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path

from fuzz.judge.compare import compare_tensor
from fuzz.judge.verdict import COMPARE_OUTCOME, Outcome, Stage, Verdict, error_verdict, scalar_numbers
from fuzz.judge.xla_audit import KNOWN_COLLISION, HashAudit, known_issue  # noqa: F401 - known_issue is re-exported
from fuzz.program.step_codegen import module_source
from fuzz.program.step_ir import StepProgram

FAULTS = ("stale-after-sync", "cached-result", "wrong-on-as-strided", "wrong-on-offset-as-strided")
REPO_ROOT = Path(__file__).resolve().parents[2]
_VERDICT_TAG = "SHAPEFUZZ-VERDICT "
_loaded: dict = {}  # source -> namespace; a replay reuses the same function object
_result_cache: dict = {}  # the "cached-result" fault's process-wide cache


class PoisonedProcess(RuntimeError):
    """torch_xla in this process is unusable (an earlier case broke it): run
    the next case in a new process."""


def load(p: StepProgram) -> dict:
    """Execute module_source(p); the namespace has steps, run_eager, keep."""
    src = module_source(p)
    if src not in _loaded:
        # A linecache entry gives tracebacks real source lines.
        filename = f"<shapefuzz-xla-{hashlib.sha1(src.encode()).hexdigest()[:12]}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        ns: dict = {"__name__": "shapefuzz_steps"}
        exec(compile(src, filename, "exec"), ns)
        _loaded[src] = ns
        if len(_loaded) > 256:
            _loaded.pop(next(iter(_loaded)))
    return _loaded[src]


def _implicit_offset_as_strided(p: StepProgram) -> bool:
    """An as_strided without an offset argument whose base is a select or a slice."""
    made = {}
    for _, s in p.steps():
        if s.op == "as_strided" and "offset" not in s.params and made.get(s.args[0]) in ("select", "slice"):
            return True
        if s.out:
            made[s.out] = s.op
    return False


def _faulty(observe, fault: str | None, p: StepProgram | None = None):
    if fault is None:
        return observe
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}; use one of {FAULTS}")
    strided = {"wrong-on-as-strided": lambda q: any(s.op == "as_strided" for _, s in q.steps()),
               "wrong-on-offset-as-strided": _implicit_offset_as_strided}.get(fault)
    if strided is not None:
        return (lambda label, v: observe(label, v + 1)) if p is not None and strided(p) else observe
    first: dict = {}

    def stale(label, v):
        name = label.split("@")[0]
        first.setdefault(name, v)
        observe(label, first[name])

    def cached(label, v):
        key = (tuple(v.shape), str(v.dtype))
        observe(label, _result_cache.setdefault(key, v))

    return stale if fault == "stale-after-sync" else cached


def _metrics() -> dict:
    import torch_xla.debug.metrics as met

    ct, et = met.metric_data("CompileTime"), met.metric_data("ExecuteTime")
    return {"compiles": ct[0] if ct else 0, "compile_ns": ct[1] if ct else 0.0,
            "executes": et[0] if et else 0,
            "cached_compiles": met.counter_value("CachedCompile") or 0,
            # .item() is aten::_local_scalar_dense by design; other aten:: counters are CPU fallbacks
            "aten": {n: met.counter_value(n) for n in met.counter_names()
                     if n.startswith("aten::") and n != "aten::_local_scalar_dense"}}


def _metric_numbers(before: dict, after: dict) -> dict:
    fallbacks = {n: v - before["aten"].get(n, 0) for n, v in after["aten"].items()}
    fallbacks = {n: v for n, v in fallbacks.items() if v}
    nums = {"compiles": after["compiles"] - before["compiles"],
            "cached_compiles": after["cached_compiles"] - before["cached_compiles"],
            "executes": after["executes"] - before["executes"],
            "cpu_fallbacks": sum(fallbacks.values()),
            "compile_seconds": (after["compile_ns"] - before["compile_ns"]) / 1e9}
    if fallbacks:
        nums["fallback_ops"] = ",".join(sorted(n[len("aten::"):] for n in fallbacks))
    return nums


def _run_xla(ns: dict, p: StepProgram, fault: str | None):
    """(observations, exception or None, metric numbers)."""
    import torch_xla
    import torch_xla.core.xla_model as xm

    warnings.filterwarnings("ignore", "Use torch_xla.sync instead", DeprecationWarning)  # xm.mark_step
    torch_xla._XLAC._xla_set_enable_alias_with_buffer_donor_config(p.settings.donor_config)
    seen: list = []
    observe = _faulty(lambda label, v: seen.append((label, v)), fault, p)
    donate = getattr(torch_xla._XLAC, "_set_buffer_donation", None) or (lambda t, flag: False)
    try:
        torch_xla.sync()  # nothing of an earlier case may ride along in this one's graphs
    except Exception:  # noqa: BLE001 - a tensor of an earlier case outlived it: collect, retry
        gc.collect()
        try:
            torch_xla.sync()
        except Exception as e:  # noqa: BLE001
            raise PoisonedProcess(f"torch_xla state left broken by an earlier case: {e}") from None
    audit = HashAudit(torch_xla._XLAC)
    before = _metrics()
    error = None
    try:
        ns["steps"](torch_xla.device(), audit.wrap(torch_xla.sync), audit.wrap(xm.mark_step),
                    lambda label, v: observe(label, ns["keep"](v)), lambda t: donate(t, True))
        torch_xla.sync()
    except Exception as e:  # noqa: BLE001 - any exception of XLA alone is a finding
        error = e
        # The traceback holds the steps() frame and so its tensors, whose broken
        # buffers would fail the next case's sync: free them now.
        traceback.clear_frames(e.__traceback__)
        gc.collect()
    numbers = _metric_numbers(before, _metrics())
    if audit.collisions:
        numbers["hash_collisions"] = len(audit.collisions)
    return seen, error, numbers, audit.collisions


def judge(expected, ref64, actual, xla_error, numbers: dict) -> Verdict:
    """The verdict of one case from its two runs' observations."""
    if isinstance(expected, BaseException):
        if xla_error is not None:
            return error_verdict(Outcome.INVALID, expected, numbers=numbers)
        return error_verdict(Outcome.EAGER_ERROR, expected, stage=Stage.EXECUTE, numbers=numbers)
    for i, (label, want) in enumerate(expected):
        if i >= len(actual):
            break
        bad = compare_tensor(actual[i][1], want, ref64[i][1] if ref64 else None)
        if bad:
            kind, detail = bad
            return Verdict(outcome=COMPARE_OUTCOME[kind], stage=Stage.COMPARE,
                           where=f"observation {i} {label}", message=f"{kind} mismatch",
                           numbers={"observation": i, **scalar_numbers(detail), **numbers})
    if xla_error is not None:
        return error_verdict(Outcome.COMPILED_ERROR, xla_error, stage=Stage.EXECUTE,
                             where=f"after observation {len(actual) - 1}", numbers=numbers)
    if len(actual) != len(expected):  # compare.py's "arity"
        return Verdict(outcome=COMPARE_OUTCOME["arity"], stage=Stage.COMPARE, where="observation count",
                       message=f"XLA made {len(actual)} observations, eager {len(expected)}", numbers=numbers)
    return Verdict(outcome=Outcome.OK, numbers=numbers)


def _needs_fresh_process(p: StepProgram) -> bool:
    return any(os.environ.get(k) != v for k, v in p.settings.env().items())


def run_step_program(p: StepProgram, fault: str | None = None, *, fresh: bool = False,
                     timeout: float = 300.0) -> Verdict:
    """Run p eagerly on CPU (and in float64 for floating dtypes) and on the XLA
    device; the verdict's numbers carry the torch_xla metrics of the XLA run
    (compiles, cached_compiles, executes, cpu_fallbacks, compile_seconds, and
    hash_collisions when the audit saw one).

    In-process by default: graphs compiled by earlier cases stay cached, which
    is what finds cross-case collisions and also what makes such a verdict
    depend on history. `fresh=True` (or settings with env knobs) runs it in a
    new process instead; `timeout` bounds that process only."""
    if fresh or _needs_fresh_process(p):
        return _run_fresh(p, fault, timeout)
    t0 = time.perf_counter()
    ns = load(p)
    try:
        expected = ns["run_eager"]()
    except Exception as e:  # noqa: BLE001
        expected = e
    ref64 = None
    if not isinstance(expected, BaseException) and p.dtype in ("float32", "float16", "bfloat16"):
        try:
            ref64 = ns["run_eager"](True)
        except Exception:  # noqa: BLE001 - no reference, the plain tolerance decides
            ref64 = None
    actual, error, numbers, collisions = _run_xla(ns, p, fault)
    v = judge(expected, ref64, actual, error, numbers)
    if collisions:
        old, new = collisions[0]
        v.message = (v.message + "\n" if v.message else "") + \
            f"graph-hash collision ({KNOWN_COLLISION}): one hash for\n{old}\nand\n{new}"
    v.recompiles = numbers["compiles"]
    v.compile_seconds = numbers["compile_seconds"]
    v.seconds = time.perf_counter() - t0
    return v


def _run_fresh(p: StepProgram, fault: str | None, timeout: float) -> Verdict:
    env = {**os.environ, **p.settings.env()}
    env.setdefault("PJRT_DEVICE", "CPU")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    t0 = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, "-m", "fuzz.judge.steps"], input=json.dumps(
            {"program": p.to_dict(), "fault": fault}), capture_output=True, text=True, env=env,
            cwd=REPO_ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Verdict(outcome=Outcome.HANG, stage=Stage.PROCESS, message=f"no verdict in {timeout:g}s",
                       seconds=time.perf_counter() - t0)
    for line in reversed(r.stdout.splitlines()):
        if line.startswith(_VERDICT_TAG):
            return Verdict.from_dict(json.loads(line[len(_VERDICT_TAG):]))
    return Verdict(outcome=Outcome.CRASH, stage=Stage.PROCESS, exc_type=f"exit {r.returncode}",
                   message=(r.stderr or r.stdout)[-2000:], seconds=time.perf_counter() - t0)


def main() -> None:
    req = json.loads(sys.stdin.read())
    v = run_step_program(StepProgram.from_dict(req["program"]), req.get("fault"))
    print(_VERDICT_TAG + json.dumps(v.to_dict()), flush=True)


if __name__ == "__main__":
    main()
