"""Run one case in this process: eager, eager in float64, and compiled over
the whole size schedule (fuzz.judge.loop, the loop every repro.py runs too),
judged by fuzz.judge.compare. Returns a Verdict.

Crashes and hangs cannot be caught here; the worker pool
(fuzz/campaign/workers.py) runs this in a child process and turns those into
verdicts.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time

from fuzz.judge import by_design, expected, loop
from fuzz.judge.backends import compile_program
from fuzz.judge.compare import compare_outputs, indices_agree, value_agrees
from fuzz.judge.poison import judge_twice
from fuzz.judge.verdict import COMPARE_OUTCOME, Outcome, Stage, Verdict, error_verdict, exception_chain, scalar_numbers
from fuzz.program.interp import load
from fuzz.program.ir import Program, ProgramError
from fuzz.program.typecheck import typecheck

_prepared = False


def prepare_process() -> None:
    """Once per process: a private Inductor cache, no TF32, deterministic
    random ops, quiet compiler logs."""
    global _prepared
    if _prepared:
        return
    from fuzz import pch

    pch.scratch_tmpdir()  # Inductor-CPU's precompiled header: the machine's kept one, nothing left in TMPDIR
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        own = tempfile.mkdtemp(prefix="shapefuzz-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = own
        atexit.register(shutil.rmtree, own, ignore_errors=True)  # this process's alone: gone with it
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


def _run_once(p: Program, check_strides: bool, check_recompiles: bool) -> Verdict:
    import torch
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    prog = load(p)
    table, sources_program = by_design.index_table(p)
    index_sources = None
    if sources_program is not None:
        sources = load(sources_program).program
        index_sources = lambda *xs: dict(zip(table, sources(*xs)))  # noqa: E731
    graphs_before = counters["stats"]["unique_graphs"]
    known = {k: v for k, v in p.settings.dynamo.items() if hasattr(torch._dynamo.config, k)}
    with torch._dynamo.config.patch(**known):  # as the repro sets them before compiling
        compiled = compile_program(prog.program, p.settings)
        rounding = _rounding(p, prog)
        start = time.perf_counter()
        r = loop.run_schedule(compiled, prog.program, prog.make_inputs, prog.mark_inputs, p.calls, compare_outputs,
                              p.settings.device, check_strides, prog.dynamic_dims if check_recompiles else (),
                              backward=prog.backward, max_graphs=loop.MAX_GRAPHS,
                              stride_exempt=by_design.stride_exempt(p), index_outputs=table,
                              index_sources=index_sources, indices_agree=indices_agree, rounding=rounding,
                              alias_exempt=by_design.alias_exempt(p))
    v = _verdict(p, r)
    v.recompiles = counters["stats"]["unique_graphs"] - graphs_before - r.get("edge_graphs", 0)
    v.seconds = time.perf_counter() - start
    v.compile_seconds = r["compile_seconds"]
    return v


def _rounding(p: Program, prog) -> dict | None:
    """run_schedule's `rounding` for p (loop._rounding_decided), or None where no computed float is read by a
    discontinuous op."""
    edges, outputs = by_design.rounding_edges(p)
    if not edges:
        return None
    return dict(edges=edges, outputs=outputs, values=prog.edge_values, replay=prog.replayed, agree=value_agrees,
                compiled=compile_program(prog.edge_values, p.settings))


def _verdict(p: Program, r: dict) -> Verdict:
    """The Verdict of a loop.run_schedule result: the first disagreement
    (outputs before inputs, unless an input no op writes was written),
    expected compiler refusals as REJECTED."""
    status = r["status"]
    if status == loop.AGREE:
        return _rounded(p, r["rounded"]) if r.get("rounded") else Verdict(outcome=Outcome.OK)
    at = dict(call=r["call"], sizes=p.sizes_at(r["call"]))
    if r.get("stage") == "backward":
        at["where"] = "backward"
    if status == loop.BOTH_ERROR:
        return error_verdict(Outcome.INVALID, r["eager_error"], **at)
    if status == loop.EAGER_ERROR:
        return error_verdict(Outcome.EAGER_ERROR, r["eager_error"], **at)
    if status in (loop.COMPILED_ERROR, loop.ERROR_CLASS):
        e = r["compiled_error"]
        marks = {m for x in p.inputs for m in x.marks}
        rule = expected.match([(type(x).__name__, str(x)) for x in exception_chain(e)], marks,
                              fullgraph=p.settings.fullgraph, unbacked_one=by_design.unbacked_one_broadcast(p))
        if status == loop.ERROR_CLASS:  # eager raised too: a refusal by design leaves an invalid program
            return _error_class(r, rule, at)
        v = error_verdict(Outcome.REJECTED if rule else Outcome.COMPILED_ERROR, e, **at)
        v.rule = rule.name if rule else ""
        return v
    if status == loop.ALIASING:
        i, got, want = r["aliasing"]
        name = f"output {i} ({p.outputs[i]})" if 0 <= i < len(p.outputs) else "outputs"
        return Verdict(outcome=Outcome.ALIASING, stage=Stage.COMPARE, where=name,
                       message=f"compiled returns {_shared(p, got)}, eager {_shared(p, want)}",
                       numbers={"compiled_shares" if got else "eager_shares": 1}, **at)
    if status == loop.STRIDE:
        i, got, want = r["strides"]
        out = r["actual"][i] if isinstance(r.get("actual"), (list, tuple)) and i < len(r["actual"]) else None
        shape = f" (shape {tuple(out.shape)})" if out is not None and hasattr(out, "shape") else ""
        # strides of unbacked sizes: one tracked class (signature.py), whatever the op
        numbers = {"unbacked_strides": 1} if out is not None and by_design.unbacked_strides(
            p, i, tuple(out.shape), tuple(got), tuple(want)) else {}
        return Verdict(outcome=Outcome.STRIDE, stage=Stage.COMPARE, where=f"output {i}",
                       message=f"strides {got} vs eager {want}{shape}", numbers=numbers, **at)
    if status == loop.GRADIENT:
        i, kind, detail = r["bad_grads"][0]
        name = p.inputs[i].name if 0 <= i < len(p.inputs) else "inputs"
        return Verdict(outcome=COMPARE_OUTCOME[kind] if kind != "values" else Outcome.GRADIENT, stage=Stage.COMPARE,
                       where=f"gradient of {name}", message=f"{kind} mismatch of a gradient: {detail}"
                       if kind != "values" else "", numbers=scalar_numbers(detail), call=at["call"], sizes=at["sizes"])
    if status == loop.RECOMPILE:
        before, after = r["graphs"]
        return Verdict(outcome=Outcome.RECOMPILE, stage=Stage.COMPILE, where="graphs",
                       message=f"{after - before} new graph(s) at a call whose static sizes an earlier call had, "
                               f"every marked-dynamic dim >= 2; marked: {_marks_text(p)}"
                               + "".join(f"; failed guard: {g}" for g in (r.get("guards") or [])[:3]),
                       numbers={"graphs": after}, **at)
    stray = _stray_writes(p, r["bad_inputs"])
    if r["bad_outputs"] and not stray:
        i, kind, detail = r["bad_outputs"][0]
        where = f"output {i} ({p.outputs[i]})" if 0 <= i < len(p.outputs) else "outputs"
        numbers = scalar_numbers(detail)
        if _aliases_a_bad_input(r, i):  # the output is a mutated input's storage: the same mismatch, seen twice
            numbers["input_alias"] = 1
        message = "; ".join(([f"{kind} mismatch: {detail}"] if kind != "values" else []) + _edge_note(p, r))
        return Verdict(outcome=COMPARE_OUTCOME[kind], stage=Stage.COMPARE, where=where, message=message,
                       numbers=numbers, **at)
    i, kind, detail = (stray or r["bad_inputs"])[0]
    numbers = scalar_numbers(detail)
    if r["bad_outputs"]:
        numbers["outputs_too"] = len(r["bad_outputs"])
    return Verdict(outcome=Outcome.INPUT_MUTATION, stage=Stage.COMPARE, where=f"input {p.inputs[i].name}",
                   message=f"{kind} mismatch after the call", numbers=numbers, **at)


def _shared(p: Program, a) -> str:
    """What loop.alias_of's answer names, in words: 'input x0's storage', 'output 0's storage', 'a fresh tensor'."""
    if a is None:
        return "a fresh tensor"
    kind, j = a
    name = p.inputs[j].name if kind == "input" and 0 <= j < len(p.inputs) else str(j)
    return f"{kind} {name}'s storage"


def _error_class(r: dict, rule, at: dict) -> Verdict:
    """Eager and compiled raised errors of different classes: the compiled error as a finding, naming eager's
    class in `where` (its message and frames are the signature's); INVALID where a rule expects the
    compiled refusal."""
    eager = loop._innermost(r["eager_error"])
    if rule:
        v = error_verdict(Outcome.INVALID, r["eager_error"], **at)
        v.rule = rule.name
        return v
    where = " ".join(filter(None, [at.get("where"), f"eager raises {type(eager).__qualname__}"]))
    v = error_verdict(Outcome.COMPILED_ERROR, r["compiled_error"], **{**at, "where": where})
    v.numbers["eager_error"] = 1
    return v


def _rounded(p: Program, rounded: dict) -> Verdict:
    """The by-design verdict of a case whose outputs differed, at some call, only where rounding decided."""
    names = [p.outputs[i] for i in rounded["outputs"] if 0 <= i < len(p.outputs)]
    return Verdict(outcome=Outcome.REJECTED, stage=Stage.COMPARE, call=rounded["call"],
                   sizes=p.sizes_at(rounded["call"]), where=", ".join(f"output {i} ({n})" for i, n in
                                                                      zip(rounded["outputs"], names)),
                   message=f"differs from eager's only through {', '.join(rounded['values'])}, which compiled "
                           "computes no further from a float64 run than eager, at a threshold: rounding decides",
                   rule=by_design.ROUNDING_RULE)


def edge_note(name: str, op: str, kind: str, detail: dict) -> str:
    """The words that name the value where a mismatch through a threshold went wrong (report/outcome.py
    reads them back: keep the two in step)."""
    numbers = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in detail.items())
    return f"it comes through {name}, which {op} reads: compiled {name} is further from a float64 run than " \
           f"eager's ({kind}: {numbers})"


def _edge_note(p: Program, r: dict) -> list:
    """[edge_note of the mismatch's edge], or []."""
    if not r.get("edge"):
        return []
    from fuzz.program.opdb import OPS

    name, kind, detail = r["edge"]
    reader = next((OPS[c.op].label(c.params) for c in p.ops if c.op in OPS and name in
                   [c.args[k] for k in OPS[c.op].decides]), "an op")
    return [edge_note(name, reader, kind, detail)]


def _stray_writes(p: Program, bad_inputs: list) -> list:
    """The mismatched inputs that no op of `p` writes (nor a view of them):
    the compiled code wrote where the program writes nothing. That write
    comes first: a graph break's eager remainder reads it, so the outputs may
    diverge because of it. Such a case is judged as the input mutation it is,
    whatever ops sit after the break (one bug, one minimal form)."""
    if not bad_inputs:
        return []
    from fuzz.program.opdb import OPS

    env = typecheck(p)
    written = {env[c.args[0]].root for c in p.ops if c.op in OPS and OPS[c.op].mutates}
    return [bad for bad in bad_inputs if 0 <= bad[0] < len(p.inputs) and env[p.inputs[bad[0]].name].root not in written]


def _marks_text(p: Program) -> str:
    """The dynamic markings as the repro writes them: 'x0 dim -2 (dynamic), ...'."""
    return ", ".join(f"{x.name} dim {d - len(x.marks) if x.mark_negative else d} ({m})"
                     for x in p.inputs for d, m in enumerate(x.marks) if m != "static") or "none"


def _aliases_a_bad_input(r: dict, i: int) -> bool:
    """Whether compiled output i shares its storage with an input that also
    mismatched after the call (an in-place op or a view on that input)."""
    actual, inputs = r.get("actual"), r.get("compiled_inputs") or []
    try:
        out = actual[i]
        ptr = out.untyped_storage().data_ptr() if out.numel() else 0
    except (AttributeError, IndexError, TypeError, RuntimeError):
        return False
    bad = {j for j, _, _ in r["bad_inputs"]}
    return bool(ptr) and any(j < len(inputs) and getattr(inputs[j], "numel", lambda: 0)()
                             and inputs[j].untyped_storage().data_ptr() == ptr for j in bad)


def run_case(p: Program, *, rerun: bool = True, check_strides: bool = True, check_recompiles: bool = True,
             confirmed=()) -> Verdict:
    """Judge one program. A finding is rerun once (unless the first run
    poisoned the process, fuzz.judge.poison); if the rerun passes the
    verdict is FLAKY (not reported as a bug), if it fails another way the first
    verdict stands, marked nondeterministic. A finding whose signature key
    is in `confirmed` (the campaign has seen it hold on a rerun) is not rerun.
    Raises ProgramError for an invalid program."""
    typecheck(p)
    prepare_process()
    again = rerun
    if rerun and confirmed:
        from fuzz.findings.signature import signature

        again = lambda v: signature(v, p).key not in confirmed  # noqa: E731
    v = judge_twice(lambda: _run_once(p, check_strides, check_recompiles), again)
    return _rejudged(p, v, check_strides, check_recompiles) if v.is_finding else v


def _rejudged(p: Program, v: Verdict, check_strides: bool, check_recompiles: bool) -> Verdict:
    """v, or REJECTED naming the rule where a maintainers' re-judge passes (expected.REJUDGE): a
    data-dependent error under fullgraph=True judged again with fullgraph=False (the fullgraph contract),
    a recompile judged again under backed_size_oblivious (0/1 specialization of a size derived from a
    dynamic one). A bug of the same shape fails the re-judge too and stays a finding."""
    import contextlib
    import copy

    rule = expected.rejudge_rule(v.outcome.value, v.exc_type, v.message, fullgraph=p.settings.fullgraph)
    if rule is None:
        return v
    q = copy.deepcopy(p)
    if rule.fullgraph_off:
        q.settings.fullgraph = False
    from torch.fx.experimental import _config as fx_config

    if rule.size_oblivious and not hasattr(fx_config, "backed_size_oblivious"):
        return v  # this torch has no such mode: nothing to re-judge under
    with fx_config.patch(backed_size_oblivious=True) if rule.size_oblivious else contextlib.nullcontext():
        again = _run_once(q, check_strides, check_recompiles)
    if again.outcome is not Outcome.OK:
        return v
    v.outcome, v.rule = Outcome.REJECTED, rule.name
    return v


def evaluate_dict(d: dict, *, rerun: bool = True, check_strides: bool = True,
                  confirmed=()) -> tuple[dict, str | None, dict]:
    """A campaign worker's judgement of one Program dict: (verdict dict, error,
    extra). error is "program" (a bad program: an INVALID verdict naming why),
    "harness" (anything else that kept it from being judged) or None."""
    try:
        return run_case(Program.from_dict(d), rerun=rerun, check_strides=check_strides,
                        confirmed=confirmed).to_dict(), None, {}
    except ProgramError as e:
        return Verdict(outcome=Outcome.INVALID, exc_type="ProgramError", message=str(e)).to_dict(), "program", {}
    except Exception as e:  # noqa: BLE001 - e.g. an unknown backend: report, keep the worker
        return error_verdict(Outcome.INVALID, e).to_dict(), "harness", {}
