"""One bug, one entry: shrinking onto a known minimal form, and `shapefuzz
dedupe` re-keying and merging a corpus (planted backends keep it cheap)."""

import argparse
import json

from fuzz.findings.store.corpus import Corpus
from fuzz.findings.dedupe import dedupe, settle
from fuzz.findings.shrink.entry import shrink
from fuzz.findings.signature import minimal_signature, signature
from fuzz.judge.runner import run_case
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.program.ir import NEUTRAL_OP, Program, TensorInput
from fuzz.program.typecheck import typecheck

from helpers import program

CORRUPT = "fuzz.planted:corrupt_large"
REFLECT_PAD = ("pad", ["x0"], {"mode": "reflect", "pad": [1, 1], "value": 0.0})


# -- shrinking onto a known form, with pure-Python stand-ins for the compiler ------

def fake(condition):
    def evaluate(p: Program) -> Verdict:
        typecheck(p)
        for call in range(p.calls):
            if condition(p, call):
                return Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=call, sizes=p.sizes_at(call),
                               where="output 0")
        return Verdict(outcome=Outcome.OK)
    return evaluate


def _dims(p, call):
    return [n for x in p.inputs for n in p.concrete_shape(x, call)]


# corrupt_large: any dim over 8; wrong_on_odd_reflect: a reflect pad and an odd dim over 1
fake_corrupt = fake(lambda p, c: bool(p.ops) and any(n > 8 for n in _dims(p, c)))
fake_reflect = fake(lambda p, c: any(o.op == "pad" and o.params.get("mode") == "reflect" for o in p.ops)
                    and any(n > 1 and n % 2 for n in _dims(p, c)))


def start(*ops, backend=CORRUPT):
    x = TensorInput(name="x0", shape=["s0", "s1"], dtype="float64", marks=["dynamic", "static"])
    y = TensorInput(name="x1", shape=["s1"], dtype="int64")
    p = program(list(ops), inputs=[x, y], sizes={"s0": [3, 11, 5], "s1": [5, 9, 7]}, backend=backend)
    typecheck(p)
    return p


MIXED = [("relu", ["x0"], {}), REFLECT_PAD[:1] + (["v0"],) + REFLECT_PAD[2:], ("exp", ["v1"], {}),
         ("add", ["x1", "x1"], {})]


def minimal_of(p, evaluate):
    v = evaluate(p)
    r = shrink(p, signature(v, p).key, evaluate=evaluate, reruns=1)
    return minimal_signature(r.verdict, r.program).key, r.program, r


def test_a_second_program_of_a_known_bug_settles_onto_its_form_in_a_few_evaluations():
    key, form, full = minimal_of(start(("sigmoid", ["x0"], {}), ("add", ["x1", "x1"], {})), fake_corrupt)
    assert [c.op for c in form.ops] == [NEUTRAL_OP]
    p = start(*MIXED)
    v = fake_corrupt(p)
    r = shrink(p, signature(v, p).key, evaluate=fake_corrupt, reruns=3, onto=[(key, form)])
    assert r.onto == key and minimal_signature(r.verdict, r.program).key == key
    assert r.evaluations <= 4 < full.evaluations  # the original, the projection, one re-check
    assert r.stats()["onto"] == key and "known minimal form" in r.summary()


def test_a_bug_that_needs_less_is_not_filed_under_a_form_that_has_more():
    # the reflect bug's form holds a reflect pad; a generic bug's program with one projects onto it and
    # reproduces, but the pad is not needed: the shrink goes on to the generic bug's own form
    rkey, rform, _ = minimal_of(start(*MIXED, backend="fuzz.planted:wrong_on_odd_reflect"), fake_reflect)
    assert [c.op for c in rform.ops] == ["pad"]
    p = start(*MIXED)
    v = fake_corrupt(p)
    r = shrink(p, signature(v, p).key, evaluate=fake_corrupt, reruns=1, onto=[(rkey, rform)])
    assert r.onto is None and any(s["pass"] == "onto" for s in r.steps)
    assert minimal_signature(r.verdict, r.program).key != rkey and [c.op for c in r.program.ops] == [NEUTRAL_OP]
    # and the reflect bug does settle onto its own form
    p = start(*MIXED, backend="fuzz.planted:wrong_on_odd_reflect")
    r = shrink(p, signature(fake_reflect(p), p).key, evaluate=fake_reflect, reruns=1, onto=[(rkey, rform)])
    assert r.onto == rkey


# -- the corpus, end to end ---------------------------------------------------------

def record(c, ops, backend=CORRUPT, sizes=(3, 5, 12)):
    p = program(ops, marks=["dynamic"], sizes={"s0": list(sizes)}, backend=backend)
    v = run_case(p)
    assert v.is_finding, v.summary()
    path, new = c.record(p, v, signature(v, p), env={"test": True})
    assert new
    return path


def cli(argv):
    from fuzz.cli.dedupe import add_parser

    ap = argparse.ArgumentParser(prog="shapefuzz")
    add_parser(ap.add_subparsers(dest="command", required=True))
    args = ap.parse_args(["dedupe", *argv])
    return args.fn(args)


def test_dedupe_merges_one_bug_found_in_three_programs(tmp_path, capsys):
    c = Corpus(tmp_path)
    paths = [record(c, [("add", ["x0", "x0"], {})]),
             record(c, [("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0}), ("relu", ["v0"], {})]),
             record(c, [("sum", ["x0"], {"dim": [0], "keepdim": True})])]
    keys = sorted(p.name for p in paths)
    assert len(set(keys)) == 3  # three provisional signatures (op families) for one bug
    before = {p.name: (p / "program.json").read_text() for p in paths}

    assert cli([str(tmp_path), "--dry-run", "--json", "--reruns", "1", "--time-budget", "60"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dry_run"] and out["entries_before"] == 3 and out["entries_after"] == 1
    ((target, sources),) = out["merges"].items()
    assert sorted(sources) == keys
    assert {p.name: (p / "program.json").read_text() for p in paths} == before  # nothing written
    assert not (tmp_path / ".index.json").exists()

    assert cli([str(tmp_path), "--reruns", "1", "--time-budget", "60"]) == 0
    text = capsys.readouterr().out
    assert f"merged 3 entries into {target}" in text and "3 entries -> 1" in text
    (e,) = list(c.entries())
    assert e.key == target and e.minimal and e.hits == 3 and sorted(e.variants) == keys
    assert [x.op for x in e.program.ops] == [NEUTRAL_OP] and e.shrunk
    assert all((e.path / "variants" / k / "program.json").read_text() == before[k] for k in keys)
    assert c.index() == {k: target for k in keys}
    # a later finding with one of the provisional keys is a hit, not a new entry
    p = program([("add", ["x0", "x0"], {})], marks=["dynamic"], sizes={"s0": [4, 10]}, backend=CORRUPT)
    v = run_case(p)
    path, new = c.record(p, v, signature(v, p))
    assert (path, new) == (e.path, False) and c.load(e.path).hits == 4
    # settled entries stay as they are
    assert settle(c, e.path).key == target and dedupe(tmp_path).settlements[0].line().endswith("minimal already")


def test_dedupe_of_a_missing_corpus_is_bad_input(tmp_path, capsys):
    assert cli([str(tmp_path / "nope")]) == 2
    assert "not a corpus directory" in capsys.readouterr().err


def test_dedupe_says_each_entry_as_it_goes_and_that_a_cuda_entry_cannot_be_checked_on_a_cpu_machine(tmp_path,
                                                                                                  capsys):
    """A dry run over an entry this machine cannot judge: it is not "does not reproduce" (nothing ran), and
    the lines come as each entry is settled, the count first."""
    import pytest
    import torch

    from fuzz.program.ir import RunSettings

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the entry could be checked")
    c = Corpus(tmp_path)
    p = program([("relu", ["x0"], {})], marks=["dynamic"], sizes={"s0": [4, 10]})
    p.settings = RunSettings(backend="inductor", device="cuda")
    v = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=1, sizes={"s0": 10}, where="output 0")
    path, _ = c.record(p, v, signature(v, p))
    s = settle(c, path, write=False)
    assert s.key is None and "cannot be checked here" in s.reason and "no CUDA device" in s.reason, s.line()
    assert cli([str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1 entries to settle; 1 to shrink, each within 300 s (in memory: a dry run)"
    assert out[1] == f"[1/1] {path.name}: shrinking ..." and "cannot be checked here" in out[2]
    assert out[-1] == "1 entries -> 1 (dry run: nothing written)"


def test_an_output_that_aliases_a_wrongly_mutated_input_is_that_input_bug():
    # mutate_input writes into its first input after the graph ran: a program whose output is that input
    # and that writes it itself (an in-place op) diverges at the output; shrunk, it is the input mutation.
    # A view of an input no op writes is judged the input mutation at once (runner._stray_writes).
    from fuzz.findings.signature import aliases_input

    mutate = "fuzz.planted:mutate_input"
    keys = []
    for ops in ([("relu_", ["x0"], {})], [("unsqueeze", ["x0"], {"dim": 0})], [("exp", ["x0"], {})]):
        p = program(ops, sizes={"s0": [3, 5]}, backend=mutate)
        v = run_case(p)
        assert aliases_input(v) == (ops[0][0] == "relu_"), v.summary()
        assert v.outcome is (Outcome.DIVERGENCE if ops[0][0] == "relu_" else Outcome.INPUT_MUTATION)
        r = shrink(p, signature(v, p).key, reruns=1, time_budget=60)
        assert [c.op for c in r.program.ops] == [NEUTRAL_OP], r.summary()
        keys.append(minimal_signature(r.verdict, r.program).key)
        assert minimal_signature(r.verdict, r.program).text.startswith("input-mutation-mismatch | input | needs: ")
    assert len(set(keys)) == 1


def test_a_dry_run_after_a_settled_entry_shrinks_the_next_one(tmp_path, capsys):
    """A settled (re-keyed) entry is a known form for the shrinks after it; the
    dry run once offered it without its program and crashed."""
    c = Corpus(tmp_path)
    pad = [("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0}), ("relu", ["v0"], {})]
    record(c, pad, backend="fuzz.planted:storage_error_on_pad")  # another outcome: not a form for the next
    assert cli([str(tmp_path), "--reruns", "1", "--time-budget", "60"]) == 0
    record(c, [("relu", ["x0"], {})])
    capsys.readouterr()
    assert cli([str(tmp_path), "--dry-run", "--json", "--reruns", "1", "--time-budget", "60"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dry_run"] and out["entries_before"] == 2 and out["entries_after"] == 2
