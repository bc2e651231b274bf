"""The rerun rule: a finding that fails again another way is a nondeterministic bug (a finding, its first
verdict kept and the second symptom noted); one that passes on its rerun is FLAKY."""

from fuzz.judge.poison import NONDETERMINISTIC, judge_twice
from fuzz.judge.runner import run_case
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.program.ir import RunSettings

from helpers import program


def _runs(*verdicts):
    it = iter(verdicts)
    return lambda: next(it)


def test_two_failing_runs_with_different_symptoms_are_a_finding():
    first = Verdict(outcome=Outcome.NONFINITE, call=0, where="output 0 (v0)")
    again = Verdict(outcome=Outcome.DIVERGENCE, call=2, where="output 0 (v0)")
    v = judge_twice(_runs(first, again))
    assert v.outcome is Outcome.NONFINITE and v.is_finding and v.call == 0
    assert v.numbers[NONDETERMINISTIC] == 1
    assert v.where.startswith("output 0 (v0) (nondeterministic: divergence at call 2")


def test_a_finding_that_passes_on_its_rerun_is_flaky():
    first = Verdict(outcome=Outcome.DIVERGENCE, call=1)
    assert judge_twice(_runs(first, Verdict(outcome=Outcome.OK))).outcome is Outcome.FLAKY
    invalid = Verdict(outcome=Outcome.INVALID, exc_type="RuntimeError")  # not a failure of the compiler either
    assert judge_twice(_runs(first, invalid)).outcome is Outcome.FLAKY


def test_the_nondeterministic_note_leaves_the_signature_as_it_was():
    from fuzz.findings.signature import signature

    p = program([("relu", ["x0"], {})])
    first = Verdict(outcome=Outcome.NONFINITE, call=0, where="output 0 (v0)")
    plain = signature(Verdict(outcome=Outcome.NONFINITE, call=0, where="output 0 (v0)"), p)
    noted = judge_twice(_runs(first, Verdict(outcome=Outcome.DIVERGENCE, call=0, where="output 0 (v0)")))
    assert signature(noted, p).text == plain.text


def _relu(backend):
    from fuzz import planted_contract

    planted_contract._runs.update(two_ways=0, once=0)  # each plant counts the graphs this process compiled
    p = program([("relu", ["x0"], {})], marks=["dynamic"], sizes={"s0": [3, 5, 7]})
    p.settings = RunSettings(backend=backend)
    return p


def test_a_backend_wrong_two_ways_is_a_nondeterministic_finding():
    """fuzz.planted:wrong_two_ways is wrong with a NaN at one compile and 1e6 off at the next: the run and its
    rerun (each compiles afresh) fail two ways."""
    v = run_case(_relu("fuzz.planted:wrong_two_ways"))
    assert v.is_finding and v.outcome in (Outcome.NONFINITE, Outcome.DIVERGENCE)
    assert v.numbers.get(NONDETERMINISTIC) == 1 and "on rerun" in v.where


def test_a_backend_wrong_once_and_right_once_is_flaky():
    assert run_case(_relu("fuzz.planted:wrong_every_other")).outcome is Outcome.FLAKY
