"""Ablation of findings: backends, static shapes, devices, Inductor flags.
Planted backends and stub evaluators keep it cheap; the flag search is
tested with a stub, since real Inductor runs cost seconds each."""

import argparse
import json

import torch

from fuzz.findings.store.corpus import Corpus
from fuzz.cli.triage import add_parser as add_triage_parser
from fuzz.judge.runner import run_case
from fuzz.findings.signature import signature
from fuzz.findings.triage import (BACKENDS, ERROR, OTHER, PASSES, REPRODUCES, SKIPPED, AblationRow, ablate, load_ablation,
                         relevant_flags, summarize, triage_entry)
from fuzz.judge.verdict import Outcome, Stage, Verdict

from helpers import program

RELU = [("relu", ["x0"], {})]
CORRUPT = "fuzz.planted:corrupt_large"


def corrupt_if_dynamic(gm, example_inputs):
    """A planted bug that needs dynamic shapes: wrong first element whenever
    the graph was compiled with a symbolic size."""
    from fuzz.planted import _corrupt_first

    def symbolic(v):
        if isinstance(v, torch.SymInt):
            return True
        return isinstance(v, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in v.shape)

    if not any(symbolic(n.meta.get("example_value")) for n in gm.graph.nodes if n.op == "placeholder"):
        return gm.forward
    return lambda *args: _corrupt_first(gm(*args))


def finding(backend=CORRUPT, marks=("dynamic",)):
    p = program(RELU, marks=list(marks), sizes={"s0": [3, 5, 12]}, backend=backend)
    v = run_case(p)
    assert v.is_finding, v.summary()
    return p, v, signature(v, p)


def by_variant(rows):
    return {(r.axis, json.dumps(r.changes, sort_keys=True)): r for r in rows}


def test_corrupt_large_ablation():
    p, _, sig = finding()
    rows = ablate(p, sig.key)
    json.dumps([r.to_dict() for r in rows])  # plain data
    assert rows[0].axis == "baseline" and rows[0].status == REPRODUCES and rows[0].reproduces
    backends = {r.changes["backend"]: r for r in rows if r.axis == "backend"}
    assert sorted(backends) == sorted(BACKENDS)  # a module:attr backend: all four built-ins are tried
    for b in ("eager", "aot_eager"):
        assert backends[b].status == PASSES and backends[b].reproduces is False and backends[b].outcome == "ok"
    rows_by = by_variant(rows)
    static = rows_by[("shapes", json.dumps({"dynamic": False, "marks": "static"}, sort_keys=True))]
    # corrupt_large fires on the size alone: static shapes reproduce it too
    assert static.status == REPRODUCES and static.signature == sig.key
    assert "not specific to dynamic shapes" in static.note
    assert rows_by[("shapes", json.dumps({"marks": "static"}))].status == REPRODUCES
    assert rows_by[("shapes", json.dumps({"dynamic": False}))].status == REPRODUCES
    cuda = rows_by[("device", json.dumps({"device": "cuda"}))]
    if not torch.cuda.is_available():
        assert cuda.status == SKIPPED and cuda.reproduces is None and "CUDA is not available" in cuda.summary
    flags = [r for r in rows if r.axis.startswith("inductor-config")]
    assert len(flags) == 1 and flags[0].status == SKIPPED and "not inductor" in flags[0].summary
    s = summarize(rows)
    assert s["baseline_reproduces"] and not s["harness_bug"] and s["backends_reproducing"] == []
    assert s["dynamic_shape_bug"] is False and s["minimal_flags"] is None


def test_dynamic_only_bug_passes_with_static_shapes():
    p, _, sig = finding(backend="test_triage:corrupt_if_dynamic")
    rows = ablate(p, sig.key)
    s = summarize(rows)
    assert s["baseline_reproduces"] and s["dynamic_shape_bug"] is True
    static = [r for r in rows if r.changes == {"dynamic": False, "marks": "static"}][0]
    assert static.status == PASSES and "a dynamic-shape bug" in static.note


def _stub(p, key_verdict, turns_off):
    """An evaluate that reproduces key_verdict unless turns_off(program)."""
    calls = []

    def evaluate(q):
        calls.append(q)
        return Verdict(outcome=Outcome.OK) if turns_off(q) else key_verdict
    return evaluate, calls


def _divergence():
    return Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=2, sizes={"s0": 12},
                   where="output 0 (v0)", numbers={"max_abs": 1.0})


def test_reproducing_on_eager_is_flagged_as_a_harness_bug():
    p = program(RELU, marks=["dynamic"], backend="inductor")
    v = _divergence()
    evaluate, _ = _stub(p, v, lambda q: False)
    rows = ablate(p, signature(v, p).key, evaluate=evaluate)
    eager = [r for r in rows if r.changes == {"backend": "eager"}][0]
    assert eager.status == REPRODUCES and "suspect the test harness" in eager.note
    s = summarize(rows)
    assert s["harness_bug"] and s["backends_reproducing"] == ["eager", "aot_eager", "aot_eager_decomp_partition"]
    assert s["dynamic_shape_bug"] is False


def test_smallest_flag_set_greedy():
    p = program(RELU, marks=["dynamic"], backend="inductor")  # device cpu
    v = _divergence()
    flags = relevant_flags(p)
    assert flags and not any(k.startswith("triton.") for k in flags)  # cpu: no Triton flags
    assert flags.get("split_reductions") is False and flags.get("cpp_wrapper") is True
    need = {"split_reductions": False, "cpp_wrapper": True}

    def off(q):
        return all(q.settings.options.get(k) == val for k, val in need.items())
    evaluate, calls = _stub(p, v, off)
    rows = ablate(p, signature(v, p).key, evaluate=evaluate, all_flags=True)
    singles = [r for r in rows if r.axis == "inductor-config"]
    assert len(singles) == len(flags) and all(r.status == REPRODUCES for r in singles)
    s = summarize(rows)
    assert s["minimal_flags"] == need and s["flags_turning_off"] == []
    marked = [r for r in rows if r.note.startswith("smallest set")]
    assert len(marked) == 1 and marked[0].changes == {"options": need}
    assert "torch._inductor.config.cpp_wrapper = True" in marked[0].variant


def test_single_flag_that_turns_it_off():
    p = program(RELU, marks=["dynamic"], backend="inductor")
    v = _divergence()
    evaluate, _ = _stub(p, v, lambda q: q.settings.options.get("comprehensive_padding") is False)
    rows = ablate(p, signature(v, p).key, evaluate=evaluate, all_flags=True)
    assert not [r for r in rows if r.axis == "inductor-config-set"]
    s = summarize(rows)
    assert s["minimal_flags"] == {"comprehensive_padding": False}
    assert s["flags_turning_off"] == [{"comprehensive_padding": False}]


def test_no_flag_set_turns_it_off():
    p = program(RELU, marks=["dynamic"], backend="inductor")
    v = _divergence()
    evaluate, _ = _stub(p, v, lambda q: False)
    rows = ablate(p, signature(v, p).key, evaluate=evaluate, all_flags=True)
    sets = [r for r in rows if r.axis == "inductor-config-set"]
    assert len(sets) == 1 and sets[0].status == REPRODUCES and "do not turn it off" in sets[0].note
    assert summarize(rows)["minimal_flags"] is None


def test_reduced_triage_runs_only_the_options_the_case_set_and_finds_the_one_that_turns_it_off():
    """The default triage tries the options the case set, not the ~15 flags it did not: it still names the
    one option that changes the (planted) answer, in a fraction of the rows."""
    p = program(RELU, marks=["dynamic"], backend="inductor")
    p.settings.options = {"split_reductions": False, "comprehensive_padding": False}  # cpu defaults: True, True
    v = _divergence()
    evaluate, calls = _stub(p, v, lambda q: q.settings.options.get("split_reductions") is True)
    rows = ablate(p, signature(v, p).key, evaluate=evaluate)
    tried = [r.changes["options"] for r in rows if r.axis == "inductor-config"]
    assert tried == [{"split_reductions": True}, {"comprehensive_padding": True}]
    s = summarize(rows)
    assert s["flags_turning_off"] == [{"split_reductions": True}] and s["minimal_flags"] == {"split_reductions": True}
    full, _ = _stub(p, v, lambda q: q.settings.options.get("split_reductions") is True)
    assert len(calls) < len(ablate(p, signature(v, p).key, evaluate=full, all_flags=True))
    # a case that set no option: no flag row is compiled at all
    p.settings.options = {}
    rows = ablate(p, signature(v, p).key, evaluate=_stub(p, v, lambda q: False)[0])
    assert rows[-1].axis == "inductor-config" and rows[-1].status == SKIPPED and "set no Inductor option" in rows[-1].summary


def test_a_variant_that_cannot_run_is_an_error_row():
    p = program(RELU, marks=["dynamic"], backend="aot_eager")
    v = _divergence()
    key = signature(v, p).key

    def evaluate(q):
        if q.settings.backend == "eager":
            raise RuntimeError("no can do")
        if q.settings.backend == "inductor":
            return Verdict(outcome=Outcome.COMPILED_ERROR, exc_type="RuntimeError", message="other")
        return v
    rows = ablate(p, key, evaluate=evaluate)
    got = {r.changes.get("backend"): r for r in rows if r.axis == "backend"}
    assert got["eager"].status == ERROR and got["eager"].summary == "RuntimeError: no can do"
    assert got["inductor"].status == OTHER and got["inductor"].outcome == "compiled-only-error"
    assert rows[-1].axis == "inductor-config" and rows[-1].status == SKIPPED


def test_triage_entry_writes_ablation_json_via_the_cli(tmp_path, capsys):
    p, v, sig = finding()
    entry, _ = Corpus(tmp_path).record(p, v, sig, env={"torch": "x"})
    ap = argparse.ArgumentParser()
    add_triage_parser(ap.add_subparsers(dest="command"))
    args = ap.parse_args(["triage", str(entry), "--json"])
    assert args.fn(args) == 0
    printed = json.loads(capsys.readouterr().out)
    doc = load_ablation(entry)
    assert doc == printed == json.loads((entry / "ablation.json").read_text())
    assert doc["signature"] == {"key": sig.key, "text": sig.text} and doc["settings"]["backend"] == CORRUPT
    assert [AblationRow.from_dict(r).axis for r in doc["rows"]][0] == "baseline"
    assert doc["summary"]["dynamic_shape_bug"] is False
    assert [q.name for q in entry.iterdir() if q.name.startswith(".") and q.name != ".lock"] == []
    assert Corpus(tmp_path).load(entry).key == sig.key  # the entry still loads
    # direct call, injected evaluate: rewritten in place
    doc2 = triage_entry(entry, evaluate=lambda q: Verdict(outcome=Outcome.OK))
    assert load_ablation(entry) == doc2 and doc2["summary"]["baseline_reproduces"] is False
    args = ap.parse_args(["triage", str(tmp_path / "missing")])
    assert args.fn(args) == 2


def test_nothing_is_concluded_when_the_baseline_does_not_reproduce():
    p = program(RELU, marks=["dynamic"], backend="inductor")
    v = _divergence()
    evaluate, calls = _stub(p, v, lambda q: True)  # everything passes
    rows = ablate(p, signature(v, p).key, evaluate=evaluate)
    assert rows[0].status == PASSES and "flaky or fixed" in rows[0].note
    assert rows[-1].axis == "inductor-config" and rows[-1].status == SKIPPED  # no flag search
    s = summarize(rows)
    assert s["baseline_reproduces"] is False and s["dynamic_shape_bug"] is None and s["minimal_flags"] is None
