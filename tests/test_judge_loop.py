"""One judging loop (fuzz/judge/loop.py) for the runner and every repro.py, one
outcome table, one compile-kwargs function, one rerun policy. The tests fail
when the standalone repro and the in-process verdict drift apart."""

import ast
import inspect
import os
import subprocess
import sys

import pytest
import torch

from fuzz.judge import loop, runner
from fuzz.judge.backends import ModeOptions, compile_kwargs
from fuzz.judge.compare import compare_outputs
from fuzz.judge.poison import judge_twice
from fuzz.judge.verdict import COMPARE_OUTCOME, Outcome, Verdict
from fuzz.program.codegen import compile_call, loop_source, repro_source
from fuzz.program.interp import load
from fuzz.program.ir import RunSettings

from helpers import draw_programs, program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELU = [("relu", ["x0"], {})]


def test_loop_imports_only_torch_and_stdlib():
    tree = ast.parse(inspect.getsource(loop))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert names <= {"torch", "time", "re"}, names


def test_repro_embeds_the_loop_verbatim():
    for p in draw_programs(3, seed=5, backend="aot_eager", max_ops=3):
        src = repro_source(p)
        assert loop_source() in src
        for fn in (loop.run_schedule, loop.describe):
            assert inspect.getsource(fn) in src


def judged(p, compiled_of, check_strides=False):
    """(run_schedule result, runner's verdict) with `compiled_of(program)`
    standing in for torch.compile: the loop and the mapping, no compiler."""
    prog = load(p)
    r = loop.run_schedule(compiled_of(prog.program), prog.program, prog.make_inputs, prog.mark_inputs, p.calls,
                          compare_outputs, check_strides=check_strides)
    return r, runner._verdict(p, r)


def test_loop_statuses_and_their_verdicts():
    p = program(RELU, sizes={"s0": [3, 5, 12]})
    r, v = judged(p, lambda f: f)
    assert r["status"] == loop.AGREE and r["call"] is None and v.outcome is Outcome.OK
    assert loop.describe(r, [{}]) == ([], False)

    def late_wrong(f):
        return lambda x: (f(x)[0] + (x.shape[0] > 4),)
    r, v = judged(p, late_wrong)
    assert r["status"] == loop.MISMATCH and r["call"] == 1 and r["bad_outputs"][0][1] == "values"
    assert v.outcome is Outcome.DIVERGENCE and v.call == 1 and v.sizes == {"s0": 5} and v.where == "output 0 (v0)"
    lines, failed = loop.describe(r, [p.sizes_at(i) for i in range(p.calls)])
    assert failed and lines[0].startswith("call 1 {'s0': 5}: output 0: values mismatch")
    assert lines[1].startswith("  compiled: [") and lines[2].startswith("  eager:    [")

    def raises(f):
        def g(x):
            raise ValueError("boom")
        return g
    r, v = judged(p, raises)
    assert r["status"] == loop.COMPILED_ERROR and v.outcome is Outcome.COMPILED_ERROR
    assert v.exc_type == "ValueError" and v.message == "boom" and v.call == 0
    assert loop.describe(r, [{}])[0] == ["call 0 {}: compiled raised ValueError: boom"]

    def mutates(f):
        def g(x):
            out = f(x)
            x.add_(1)
            return out
        return g
    r, v = judged(p, mutates)
    assert r["status"] == loop.MISMATCH and not r["bad_outputs"] and r["bad_inputs"]
    assert v.outcome is Outcome.INPUT_MUTATION and v.where == "input x0"


def test_both_raise_stops_the_schedule_as_invalid():
    p = program(RELU, sizes={"s0": [3, 5, 12]})
    prog = load(p)

    def boom(x):
        raise RuntimeError("both")
    r = loop.run_schedule(boom, boom, prog.make_inputs, prog.mark_inputs, p.calls, compare_outputs)
    assert r["status"] == loop.BOTH_ERROR and r["call"] == 0
    assert runner._verdict(p, r).outcome is Outcome.INVALID
    lines, failed = loop.describe(r, [{}])
    assert not failed and "both raise" in lines[0]


def test_type_and_arity_are_shape_mismatches_everywhere():
    assert COMPARE_OUTCOME["type"] is COMPARE_OUTCOME["arity"] is COMPARE_OUTCOME["shape"] is Outcome.SHAPE
    p = program(RELU, sizes={"s0": [3, 5, 12]})
    r, v = judged(p, lambda f: (lambda x: f(x) + (x,)))
    assert r["bad_outputs"][0][:2] == (-1, "arity") and v.outcome is Outcome.SHAPE and v.where == "outputs"
    r, v = judged(p, lambda f: (lambda x: (1.0,)))
    assert r["bad_outputs"][0][1] == "type" and v.outcome is Outcome.SHAPE

    from fuzz.judge.steps import judge  # torch_xla is imported lazily, not by judge()

    one = [("t0", torch.ones(2))]
    assert judge(one, None, [], None, {}).outcome is Outcome.SHAPE  # fewer observations
    assert judge(one, None, [("t0", torch.ones(3))], None, {}).outcome is Outcome.SHAPE


def test_stride_check_is_opt_in():
    p = program(RELU, shape=(2, "s0"), sizes={"s0": [3, 5, 12]})

    def transposed(f):
        return lambda x: (f(x)[0].t().contiguous().t(),)
    r, v = judged(p, transposed)
    assert r["status"] == loop.AGREE
    r, v = judged(p, transposed, check_strides=True)
    assert r["status"] == loop.STRIDE and v.outcome is Outcome.STRIDE and v.where == "output 0"


def test_compile_kwargs_are_one_piece_of_data():
    s = RunSettings(backend="inductor", mode="max-autotune", options={"max_autotune": True, "no.such_flag": 1})
    kw = compile_kwargs(s)
    assert kw == {"dynamic": None, "options": ModeOptions("max-autotune", None, {"max_autotune": True})}
    assert kw["options"].value() == {**torch._inductor.list_mode_options("max-autotune", None), "max_autotune": True}
    p = program(RELU, backend="inductor")
    p.settings = s
    assert compile_call(p)[1] == ("torch.compile(program, backend='inductor', dynamic=None, options={**torch._inductor."
                                  "list_mode_options('max-autotune', None), **{'max_autotune': True}})")
    p.settings = RunSettings(backend="inductor", mode="reduce-overhead", dynamic=True)
    assert compile_call(p)[1] == "torch.compile(program, backend='inductor', dynamic=True, mode='reduce-overhead')"
    p.settings = RunSettings(backend="fuzz.planted:passthrough", mode="max-autotune", options={"max_autotune": True})
    assert compile_kwargs(p.settings) == {"dynamic": None}  # mode and options are Inductor's
    assert compile_call(p) == (["import importlib"], "torch.compile(program, backend=getattr(importlib.import_module("
                                                     "'fuzz.planted'), 'passthrough'), dynamic=None)")


def test_rerun_policy():
    def runs(*verdicts):
        it = iter(verdicts)
        seen = []
        return (lambda: seen.append(1) or next(it)), seen

    ok = Verdict(outcome=Outcome.OK)
    bad = Verdict(outcome=Outcome.DIVERGENCE, call=1)
    once, seen = runs(ok)
    assert judge_twice(once) is ok and len(seen) == 1
    once, seen = runs(bad, bad)
    assert judge_twice(once) is bad and len(seen) == 2
    once, seen = runs(bad, ok)
    assert judge_twice(once).outcome is Outcome.FLAKY
    once, seen = runs(bad)
    assert judge_twice(once, rerun=False) is bad
    for poison in (Verdict(outcome=Outcome.COMPILED_ERROR, exc_type="AcceleratorError", message="CUDA error: boom"),
                   Verdict(outcome=Outcome.COMPILED_ERROR, exc_type="MemoryError")):
        once, seen = runs(poison, ok)
        assert judge_twice(once) is poison and len(seen) == 1


def run_repro(p, tmp_path):
    path = tmp_path / "repro.py"
    path.write_text(repro_source(p))
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize("backend", ["fuzz.planted:corrupt_large", "aot_eager"])
def test_repro_and_runner_agree_on_a_generated_program(backend, tmp_path):
    """A generated program's repro.py exits 1 exactly when the runner finds a
    bug, and says so at the call and output the verdict names."""
    planted = backend != "aot_eager"
    for p in draw_programs(20, seed=31, backend=backend, max_ops=3):
        v = runner.run_case(p)
        if (v.is_finding if planted else v.outcome is Outcome.OK):
            break
    else:
        pytest.fail(f"no generated program gave the wanted verdict on {backend}")
    r = run_repro(p, tmp_path)
    out = r.stdout
    assert r.returncode == (1 if planted else 0), (v.summary(), out[-2000:], r.stderr[-2000:])
    if planted:
        assert out.splitlines()[-1] == "FAIL: compiled and eager disagree"
        head = f"call {v.call} {v.sizes}: "
        first = next(line for line in out.splitlines() if line.startswith("call "))
        assert first.startswith(head), (first, v.summary())
        if v.outcome is Outcome.DIVERGENCE:
            assert first.startswith(head + v.where.split(" (")[0] + ": values mismatch"), (first, v.summary())
    else:
        assert out.splitlines() == ["OK: compiled and eager agree"]


def test_calls_that_alias_inputs_differently_may_compile_apart():
    """Dynamo guards on input aliasing: a call passing one tensor twice after a
    call passing a copy compiles anew by design (eager found flagged before)."""
    a, b = torch.randn(4, 3), torch.randn(5)
    assert loop.reuse_key([b, a, a], [(0, 0)]) != loop.reuse_key([b, a, a.clone()], [(0, 0)])
    from fuzz.program.ir import TensorInput

    x0 = TensorInput(name="x0", shape=["s0"], marks=["dynamic"])
    x1 = TensorInput(name="x1", shape=[4, 3])
    x2 = TensorInput(name="x2", shape=[4, 3], alias={"of": "x1", "view": "same", "calls": [True, False, True, False]})
    p = program([("add", ["x1", "x2"], {}), ("relu", ["x0"], {})], inputs=[x0, x1, x2],
                sizes={"s0": [5, 5, 6, 6]}, backend="eager")
    p.outputs = ["v0", "v1"]
    assert runner.run_case(p).outcome is Outcome.OK


@pytest.mark.parametrize("reason,flagged", [
    ("0/0: tensor 'x0' size mismatch at index 0. expected 5, actual 7", True),  # a marked dim pinned
    ("0/0: x0.size()[0] == 5", True),
    ("0/0: x0.size()[0] < x1.size()[0]  # v0 = x0 + 1", False),  # how dynamic sizes relate: by design
    ("0/1: tensor 'x0' size mismatch at index 0. expected 1, actual 7", False),  # a graph specialised to 1
])
def test_a_recompile_is_flagged_unless_its_guards_are_by_design(monkeypatch, reason, flagged):
    """A stand-in compiled function makes a new graph at call 1 (same key as call 0)
    and records `reason` as Dynamo would; the rule decides from the reason."""
    from torch._dynamo.utils import counters, guard_failures

    p = program(RELU, sizes={"s0": [5, 7, 9]}, marks=["dynamic"])
    prog = load(p)
    monkeypatch.setitem(guard_failures, "stand-in", [])
    calls = []

    def compiled(x):
        calls.append(1)
        if len(calls) == 2:
            counters["stats"]["unique_graphs"] += 1
            guard_failures["stand-in"].append(reason)
        return prog.program(x)

    r = loop.run_schedule(compiled, prog.program, prog.make_inputs, prog.mark_inputs, p.calls, compare_outputs,
                          check_strides=False, dynamic_dims=[(0, 0)])
    assert (r["status"] == loop.RECOMPILE) is flagged and (r["call"] == 1 if flagged else r["call"] is None)
    if flagged:
        v = runner._verdict(p, r)
        assert v.outcome is Outcome.RECOMPILE and reason in v.message


def test_strides_are_judged_unless_eager_returns_an_overlapping_view():
    def make_inputs(call, fp64=False):
        g = torch.Generator().manual_seed(call)
        return [torch.randn(4, 3 + call, generator=g, dtype=torch.float64 if fp64 else torch.float32)]

    def judge(eager_out, compiled_out):
        # a copy where eager returns a view of the input is an aliasing mismatch (tests/test_aliasing.py): the
        # layout alone is judged here
        r = loop.run_schedule(lambda x: (compiled_out(x),), lambda x: (eager_out(x),), make_inputs,
                              lambda x: None, 2, compare_outputs, check_strides=True, alias_exempt=(0,))
        return r["status"]

    expanded = lambda x: x[:1].expand(4, x.shape[1])  # noqa: E731 - stride 0: addresses a row four times
    assert judge(expanded, lambda x: expanded(x).contiguous()) == loop.AGREE
    transposed = lambda x: x.t()  # noqa: E731
    assert judge(transposed, lambda x: x.t().contiguous()) == loop.STRIDE


def test_relational_only_guards_are_by_design():
    from fuzz.judge.loop import relational_only

    by_design = [["0/0: x0.size()[1] < x0.size()[2]  # v0 = ..."],
                 ["0/0: 2 <= x0.size()[0] <= 3  # v0 = x0.narrow(0, 0, x0.shape[-1] // 2)"],  # a chained bound
                 ["0/1: x1.stride()[0] >= 4"],
                 ["0/0: tensor 'x0' size mismatch at index 0. expected 1, actual 7"]]  # a 0/1-specialised graph
    for reasons in by_design:
        assert relational_only(reasons), reasons
    not_by_design = [[], ["0/0: x0.size()[0] == 5"], ["0/0: 2 <= x0.size()[0] != 3"],
                     ["0/0: tensor 'x0' size mismatch at index 0. expected 31, actual 5"],
                     ["0/0: x0.size()[1] < x0.size()[2]", "0/0: x0.size()[0] == 5"]]
    for reasons in not_by_design:
        assert not relational_only(reasons), reasons


def test_calls_on_views_of_other_sized_bases_may_compile_apart():
    """Dynamo guards on the sizes of a view input's base, which no mark makes
    dynamic (a GPU campaign flagged `((-1) + x1._base.size()[2]) // 3 == 1`)."""
    x = torch.randn(6, 4)[:, :2]
    same_base = torch.randn(6, 4)[:, :2]
    other_base = torch.randn(6, 7)[:, :2]
    assert loop.reuse_key([x], [(0, 0)]) == loop.reuse_key([same_base], [(0, 0)])
    assert loop.reuse_key([x], [(0, 0)]) != loop.reuse_key([other_base], [(0, 0)])


def test_a_case_stops_calling_once_its_schedule_compiled_max_graphs(monkeypatch):
    """dynamic=False compiles one static graph per size: five sizes would be five
    graphs; the loop stops after MAX_GRAPHS of them, in the runner and in repro.py
    alike. A planted bug that only shows at the fifth size is then not reached."""
    p = program(RELU, sizes={"s0": [3, 4, 5, 6, 9]}, backend="fuzz.planted:corrupt_large")
    p.settings.dynamic = False
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.OK and v.recompiles == loop.MAX_GRAPHS == 3
    assert loop.MAX_GRAPHS and "max_graphs=MAX_GRAPHS" in repro_source(p)
    monkeypatch.setattr(loop, "MAX_GRAPHS", None)
    v = runner.run_case(p, rerun=False)
    assert v.outcome is Outcome.DIVERGENCE and v.call == 4 and v.recompiles == 5


# one wrong output of each kind compare_tensor tells apart: another shape, dtype, type, NaN where eager has
# none, other values
WRONG_OUTPUTS = {"shape": lambda t: t[:1], "dtype": lambda t: t.double(), "type": lambda t: 1.0,
                 "nonfinite": lambda t: t * float("nan"), "values": lambda t: t + 1}


@pytest.mark.parametrize("kind", sorted(WRONG_OUTPUTS))
def test_every_mismatch_either_judge_makes_is_a_verdict_the_corpus_loads(kind):
    """A verdict is written to verdict.json and read back under the corpus schema by every later step (shrink,
    replay, report): a shape mismatch of a step program kept its shapes as lists there, and its entry's shrink
    failed on reading it. Both judges, each kind of mismatch."""
    from fuzz.findings.store.corpus_files import violation
    from fuzz.judge.steps import judge

    wrong = WRONG_OUTPUTS[kind]
    p = program(RELU, sizes={"s0": [3, 5, 12]})
    _, compiled = judged(p, lambda f: (lambda x: (wrong(f(x)[0]),)))
    want = torch.ones(2, 3)
    stepped = judge([("t0", want)], None, [("t0", wrong(want))], None, {"compiles": 1})
    for v in (compiled, stepped):
        assert v.is_finding and v.stage is not None, v.summary()
        assert violation(v.to_dict(), "verdict.json") is None, (v.numbers, violation(v.to_dict(), "verdict.json"))
