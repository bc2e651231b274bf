"""The shrink engine with pure-Python stand-ins for the compiler: a toy kind,
and torch_xla step programs judged by a fake (no torch_xla needed)."""

import copy
import json
from collections import Counter

import pytest

from fuzz.campaign.generate import generate
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.shrink.engine import Engine
from fuzz.findings.shrink.steps import PASSES, STEPS, n_steps, shrink_step_entry, shrink_steps
from fuzz.findings.signature import in_bucket, signature
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.program.ir import ProgramError
from fuzz.program.step_ir import OPS, Block, Step, StepProgram, check

# -- a toy kind: programs are lists of ints -----------------------------------------


class Ints(list):
    def to_dict(self):
        return {"ints": list(self)}


def _drop_one(p):
    for i in range(len(p)):
        yield f"drop {p[i]}", Ints(p[:i] + p[i + 1:])


def _lower_one(p):
    for i, v in enumerate(p):
        if v > 0:
            yield f"{v} -> {v - 1}", Ints(p[:i] + [v - 1] + p[i + 1:])


class IntsKind:
    restart = False

    def passes(self, engine):
        return [("drop", _drop_one), ("lower", _lower_one)]

    cost = staticmethod(lambda p: (len(p), sum(p)))
    canonical = staticmethod(lambda p: json.dumps(list(p)))
    measures = staticmethod(lambda p: {"length": len(p), "total": sum(p)})

    @staticmethod
    def check(p):
        if len(set(p)) != len(p):
            raise ProgramError("repeated value")


def crash_when(pred):
    """An evaluator: a crash (one signature, whatever the program) when pred(p)."""
    seen = Counter()

    def evaluate(p):
        seen[json.dumps(list(p))] += 1
        if pred(p):
            return Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE, exc_type="RuntimeError",
                           message="boom", frames=["/x/torch/_inductor/a.py:1:f"])
        return Verdict(outcome=Outcome.OK)

    return evaluate, seen


def test_engine_reaches_the_minimum_and_judges_nothing_twice():
    evaluate, seen = crash_when(lambda p: any(v >= 3 for v in p) and len(p) >= 2)
    res = Engine(IntsKind(), evaluate).run(Ints([9, 5, 1, 8, 2]), reruns=0)
    assert res.reproduced and list(res.program) == [3, 0] and not res.flaky
    assert not [k for k, n in seen.items() if n > 1] and res.evaluations == sum(seen.values())
    assert res.rejected_by_typecheck > 0 and all(len(set(json.loads(k))) == len(json.loads(k)) for k in seen)
    costs = [(s["length"], s["total"]) for s in res.steps]
    assert costs == sorted(costs, reverse=True) and len(set(costs)) == len(costs)  # strictly lower every step
    assert res.stats()["length_before"] == 5 and res.stats()["length_after"] == 2
    assert res.summary().startswith("length 5 -> 2, total 25 -> 3;")


def test_engine_rechecks_and_keeps_a_flaky_result_out():
    calls = Counter()

    def evaluate(p):  # a one-element program reproduces only the first time
        calls[tuple(p)] += 1
        ok = 7 in p and (len(p) > 1 or calls[tuple(p)] == 1)
        return Verdict(outcome=Outcome.CRASH if ok else Outcome.OK, exc_type="Crash" if ok else "")

    res = Engine(IntsKind(), evaluate).run(Ints([7, 2, 4]), reruns=2)
    assert res.flaky and list(res.flaky_program) == [7] and res.rechecks == [False, False]
    assert 7 in res.program and len(res.program) == 2
    assert res.steps and res.steps[-1]["length"] == 2  # the log stops at the program returned


def test_engine_misses_and_budget():
    evaluate, _ = crash_when(lambda p: False)
    res = Engine(IntsKind(), evaluate).run(Ints([1, 2]), reruns=2)
    assert not res.reproduced and res.evaluations == 3 and res.original_verdict.outcome is Outcome.OK
    evaluate, _ = crash_when(lambda p: True)
    res = Engine(IntsKind(), evaluate, time_budget=0.0).run(Ints([1, 2]), reruns=1)
    assert res.reproduced and res.timed_out and res.evaluations == 2 and list(res.program) == [1, 2]


def test_engine_counts_a_raising_evaluate_as_a_miss():
    def evaluate(p):
        if len(p) == 1:
            raise OSError("worker died")
        return Verdict(outcome=Outcome.CRASH, exc_type="Crash")

    res = Engine(IntsKind(), evaluate).run(Ints([4, 5, 6]), reruns=0)
    assert res.reproduced and len(res.program) == 2


def test_restart_kind_starts_over_after_every_accepted_step():
    order = []

    class Restarting(IntsKind):
        restart = True

        def passes(self, engine):
            def drop(p):
                order.append(("drop", len(p), sum(p)))
                yield from _drop_one(p)
            return [("drop", drop), ("lower", _lower_one)]

    evaluate, _ = crash_when(lambda p: sum(p) >= 4)
    res = Engine(Restarting(), evaluate).run(Ints([3, 3]), reruns=0)
    assert list(res.program) == [1, 3] and [s["pass"] for s in res.steps] == ["lower", "lower"]
    assert order == [("drop", 2, 6), ("drop", 2, 5), ("drop", 2, 4)]  # each accepted step: back to "drop"


# -- step programs, judged by a fake -------------------------------------------------

def fake_stale_read(q: StepProgram) -> Verdict:
    """A stand-in for a torch_xla cache bug: an in-place write, then a sync,
    then an observation, reads a stale value."""
    check(q)
    wrote = synced = False
    for _, s in q.steps():
        kind = OPS[s.op].kind
        if kind in ("inplace", "setitem"):
            wrote = True
        elif kind == "sync" and wrote:
            synced = True
        elif kind == "observe" and synced:
            return Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, where="observe 0")
    return Verdict(outcome=Outcome.OK)


def step_findings(n=3):
    from strategies.steps import step_programs

    found = [p for p in generate(step_programs(), seed_=21, count=60)
             if n_steps(p) >= 6 and fake_stale_read(p).is_finding]
    assert len(found) >= n
    return found[:n]


def test_step_candidates_always_lower_the_cost():
    # the engine skips candidates that do not lower the cost: none of the step passes' may be skipped
    for p in step_findings():
        c = STEPS.cost(p)
        for name, gen in PASSES:
            for what, q in gen(p):
                assert STEPS.cost(q) < c, (name, what)


def test_step_programs_shrink_with_the_bucket_pinned():
    for p in step_findings():
        before = copy.deepcopy(p)
        res = shrink_steps(p, fake_stale_read, time_budget=60, reruns=1)
        assert p.to_dict() == before.to_dict()  # the caller's program is left alone
        check(res.program)
        assert res.reproduced and res.verdict.is_finding and not res.flaky
        assert res.steps_after < res.steps_before == n_steps(p) and res.accepted
        assert res.key == signature(fake_stale_read(p), p).key and res.target == signature(fake_stale_read(p), p).text
        ops = [OPS[s.op].kind for _, s in res.program.steps()]
        assert {"sync", "observe"} <= set(ops) and ({"inplace", "setitem"} & set(ops))
        for _, gen in PASSES:  # a fixpoint: no single candidate of the result reproduces
            for what, q in gen(res.program):
                try:
                    w = fake_stale_read(q)
                except ProgramError:
                    continue
                assert not (w.is_finding and in_bucket(signature(w, q).text, res.target)), what
        assert res.stats()["steps_after"] == res.steps_after and "steps" in res.summary()


def test_step_shrink_refuses_what_is_not_its_finding():
    p = step_findings(1)[0]
    ok = StepProgram(blocks=[Block(steps=[Step("tensor", params={"data": [1]}, out="t0"), Step("sync")])])
    with pytest.raises(ValueError, match="not a finding"):
        shrink_steps(ok, fake_stale_read)
    with pytest.raises(ValueError, match="reproduces another bug"):
        shrink_steps(p, fake_stale_read, target="divergence | observe | families: view | device: xla")


def test_step_entry_is_rewritten_through_the_corpus(tmp_path):
    p = step_findings(1)[0]
    v = fake_stale_read(p)
    corpus = Corpus(tmp_path / "corpus")
    entry, _ = corpus.record(p, v, signature(v, p), env={"test": True})
    res = shrink_step_entry(entry, evaluate=fake_stale_read, time_budget=60, reruns=1)
    e = corpus.load(entry)
    assert e.key == entry.name and STEPS.canonical(e.program) == STEPS.canonical(res.program)
    assert e.meta["shrink"]["steps_after"] == n_steps(e.program) < n_steps(p) and e.meta["shrink"]["accepted"]
    assert StepProgram.from_json((entry / "original_program.json").read_text()).to_dict() == p.to_dict()
    assert "torch_xla" in (entry / "repro.py").read_text()


def test_shrink_command_on_a_step_entry(tmp_path, monkeypatch, capsys):
    import argparse

    import fuzz.findings.shrink.steps as shrink_steps_mod
    from fuzz.cli.shrink import add_parser

    monkeypatch.setattr(shrink_steps_mod, "fresh_evaluator", lambda *a, **k: fake_stale_read)
    monkeypatch.setattr("fuzz.cli.shrink.cannot_run", lambda p: False)  # torch_xla is faked with the evaluator
    p = step_findings(1)[0]
    v = fake_stale_read(p)
    entry, _ = Corpus(tmp_path).record(p, v, signature(v, p), env={"test": True})
    ap = argparse.ArgumentParser(prog="shapefuzz")
    add_parser(ap.add_subparsers(dest="command", required=True))
    args = ap.parse_args(["shrink", str(entry), "--json", "--reruns", "1"])
    assert args.fn(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reproduced"] and out["target_key"] == entry.name and out["steps_after"] < out["steps_before"]
    assert out["verdict"]["outcome"] == "divergence" and (entry / "original_program.json").exists()
