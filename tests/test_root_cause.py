"""One cause, one row: root-cause known-issue rules (fuzz/findings/status/triggers.py) and clusters of corpus
entries (fuzz/findings/status/clusters.py). Each rule catches its cause under every symptom and leaves alone a
program of the same ops where the cause cannot show."""

import json
from pathlib import Path

from fuzz.findings.status.clusters import clusters
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.status.known import KnownIssues
from fuzz.findings.signature import minimal_signature, signature
from fuzz.findings.status.triggers import escapes, operand_dtypes
from fuzz.judge.runner import run_case
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.program.ir import TensorInput

from helpers import program

SHIPPED = Path(__file__).resolve().parent.parent / "corpus" / "known_issues.json"
DROPOUT = ("dropout0", ["x0"], {"training": False})


def wrong(outcome, where="output 0"):
    return Verdict(outcome=outcome, stage=Stage.EXECUTE, where=where, message="values mismatch")


def test_escapes_follows_views_and_in_place_writes():
    returned = program([DROPOUT])
    written = program([DROPOUT, ("unsqueeze", ["v0"], {"dim": 0}), ("zero_", ["v1"], {})], outputs=["v2"])
    read_only = program([DROPOUT, ("relu", ["v0"], {})])
    assert escapes(returned, "dropout0") and escapes(written, "dropout0")
    assert not escapes(read_only, "dropout0") and not escapes(read_only, "relu_")


def test_the_dropout_rule_names_the_cause_under_every_symptom_and_nothing_else():
    known = KnownIssues.load(SHIPPED)
    p = program([DROPOUT, ("zero_", ["x0"], {})], outputs=["v0", "v1"])
    for outcome in (Outcome.DIVERGENCE, Outcome.INPUT_MUTATION, Outcome.STRIDE):
        v = wrong(outcome)
        rule = known.match(signature(v, p), v, p)
        assert rule is not None and rule.url.endswith("/115249"), outcome
    # the same ops, the dropout's result only read: a divergence there is another bug
    q = program([DROPOUT, ("relu", ["v0"], {})])
    v = wrong(Outcome.DIVERGENCE)
    assert known.match(signature(v, q), v, q) is None


def test_the_dropout_rule_blames_only_the_output_or_input_its_result_reaches():
    """A program that returns a dropout's result beside another output (a planted wrong_strides run,
    seed 4, case 10: cat's output came back transposed) is not that cause when the other output is
    the one that differs; nor is a write into an input the dropout never read."""
    known = KnownIssues.load(SHIPPED)
    x1 = TensorInput(name="x1", shape=["s0"], dtype="float32")
    p = program([("relu", ["x1"], {}), DROPOUT, ("unsqueeze", ["v1"], {"dim": 0}), ("zero_", ["v2"], {})],
                outputs=["v0", "v1"], inputs=[TensorInput(name="x0", shape=["s0"], dtype="float32"), x1])
    for where, blamed in (("output 1 (v1)", True), ("output 0 (v0)", False), ("output 0", False),
                          ("input x0", True), ("input x1", False), ("outputs", True)):
        outcome = Outcome.INPUT_MUTATION if where.startswith("input") else Outcome.STRIDE
        v = wrong(outcome, where)
        rule = known.match(signature(v, p), v, p)
        assert (rule is not None and rule.url.endswith("/115249")) == blamed, where
        assert escapes(p, "dropout0", where) == blamed, where


def test_the_any_rule_needs_a_uint8_operand_under_inductor():
    known = KnownIssues.load(SHIPPED)
    u8 = program([("any", ["x0"], {"dim": 0, "keepdim": False})], dtype="uint8", backend="inductor")
    assert operand_dtypes(u8, "any") == {"uint8"}
    for outcome in (Outcome.DTYPE, Outcome.DIVERGENCE):  # a topk downstream of the bool result, say
        v = wrong(outcome)
        assert known.match(signature(v, u8), v, u8).url.endswith("/198081")
    f32 = program([("any", ["x0"], {"dim": 0, "keepdim": False})], backend="inductor")
    v = wrong(Outcome.DTYPE)
    assert known.match(signature(v, f32), v, f32) is None


def test_root_cause_fields_are_checked(tmp_path):
    import pytest

    from fuzz.findings.status.known import KnownIssuesError

    for bad in ({"outcomes": ["no-such"]}, {"ops": ["any"], "operand_dtypes": {"any": ["float128"]}},
                {"ops": ["any"], "escapes": "any"}):
        (tmp_path / "k.json").write_text(json.dumps([bad]))
        with pytest.raises(KnownIssuesError):
            KnownIssues.load(tmp_path / "k.json")


def _record(corpus, p):
    v = run_case(p)
    assert v.is_finding, v.summary()
    return corpus.record(p, v, minimal_signature(v, p))[0]  # as a shrunk entry is keyed


def test_entries_of_one_cause_are_one_cluster(tmp_path):
    """The same planted bug under two markings (two minimal keys) is one cluster; the same bug on
    another op is another."""
    corpus = Corpus(tmp_path)
    pad = ("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0})
    a = _record(corpus, program([pad], marks=["dynamic"], backend="fuzz.planted:corrupt_large"))
    b = _record(corpus, program([pad], marks=["unbacked"], backend="fuzz.planted:corrupt_large"))
    c = _record(corpus, program([("cumsum", ["x0"], {"dim": 0})], marks=["dynamic"],
                                backend="fuzz.planted:corrupt_large"))
    assert len({a, b, c}) == 3  # three entries (three keys) to start with
    got = {frozenset(e.key for e in cl.entries) for cl in clusters(Corpus(tmp_path).entries())}
    assert got == {frozenset({a.name, b.name}), frozenset({c.name})}
