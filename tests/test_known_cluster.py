"""Follow-up time only for what can be new. A finding whose minimal
key needs no shrink (an exception named by its message) and is held already --
by a corpus entry, or by a known-issues rule -- is counted there: no entry, no
shrink, no triage. No torch run: the verdicts are made by hand."""

from types import SimpleNamespace

from fuzz.campaign.recorder import Recorder
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.dedupe import settle
from fuzz.findings.status.known import KnownIssues, _rule
from fuzz.findings.signature import settled_signature, signature
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.planted import STORAGE_MESSAGE

from helpers import program

PAD = [("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0}), ("relu", ["v0"], {})]


def storage_error() -> Verdict:
    return Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE, call=1, exc_type="RuntimeError",
                   message=STORAGE_MESSAGE)


class Queued:
    """The campaign's follow-ups, as the recorder sees them: what it queued."""

    def __init__(self):
        self.jobs = []

    def queue(self, entry, types, params):
        self.jobs += [f"{t}:{entry}" for t in types]

    def known(self, entry):
        return any(j.endswith(":" + entry) for j in self.jobs)


def recorder(tmp_path, corpus, known=None, triage=True):
    cfg = SimpleNamespace(state_dir=str(tmp_path / "state"), shrink_budget=60.0, timeout=60.0, shrink=True,
                          triage=triage, sanitize=False, on_cuda=lambda: False)
    logged = []
    state = SimpleNamespace(corpus_dir=str(corpus.root), finding_cases=set(),
                            record_finding=lambda i, o, key, text, known_as, entry, new: logged.append(
                                (key, known_as, entry, new)) or True)
    rec = Recorder(cfg, SimpleNamespace(triage=None), state, corpus, known, Queued(),
                   SimpleNamespace(note=lambda m: None), SimpleNamespace(new_entries=[]))
    return rec, logged


def held_cluster(tmp_path):
    """A corpus holding the storage error's minimal entry (made on another machine: its index is not here)."""
    corpus = Corpus(tmp_path / "corpus")
    first = program(PAD, marks=["dynamic"], backend="fuzz.planted:storage_error_on_pad")
    settled = settled_signature(storage_error(), first)
    assert settled is not None and settled.minimal
    entry, _ = corpus.record(first, storage_error(), settled)
    return corpus, entry, settled


def test_a_finding_in_a_known_cluster_starts_no_shrink(tmp_path):
    corpus, entry, settled = held_cluster(tmp_path)
    rec, logged = recorder(tmp_path, corpus)
    other = program(PAD + [("abs", ["v1"], {})], marks=["dynamic"], backend="fuzz.planted:storage_error_on_pad")
    v = storage_error()
    sig = signature(v, other)
    assert sig.key != settled.key and corpus.resolve(sig.key) is None  # a new provisional key
    rec._finding(0, v, other, {})
    assert rec.followups.jobs == [] and rec.result.new_entries == []  # counted, not shrunk
    assert corpus.load(entry).hits == 2 and [e.key for e in corpus.entries()] == [settled.key]
    assert corpus.resolve(sig.key) == entry and logged[0][3] is False
    # a finding of a bug the corpus does not hold is new, and queued
    fresh = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=1, where="output 0 (v2)")
    rec._finding(1, fresh, other, {})
    assert rec.followups.jobs == [f"shrink:{signature(fresh, other).key}", f"triage:{signature(fresh, other).key}"]


def test_a_rule_that_names_the_minimal_key_counts_it_as_known(tmp_path):
    corpus = Corpus(tmp_path / "corpus")
    p = program(PAD, marks=["dynamic"], backend="fuzz.planted:storage_error_on_pad")
    settled = settled_signature(storage_error(), p)
    known = KnownIssues([_rule(0, {"signature": settled.key, "url": "https://example.org/1", "status": "open"})])
    rec, logged = recorder(tmp_path, corpus, known)
    rec._finding(0, storage_error(), p, {})
    assert rec.followups.jobs == [] and list(corpus.entries()) == []
    assert logged == [(signature(storage_error(), p).key, "https://example.org/1", None, False)]


def test_settle_merges_an_entry_whose_minimal_key_is_held_without_shrinking_it(tmp_path):
    corpus, entry, settled = held_cluster(tmp_path)
    other = program(PAD + [("abs", ["v1"], {})], marks=["dynamic"], backend="fuzz.planted:storage_error_on_pad")
    made, new = corpus.record(other, storage_error(), signature(storage_error(), other))
    assert new

    def no_shrink(*a, **k):
        raise AssertionError("shrunk")
    s = settle(corpus, made, shrinker=no_shrink, timeout=60)
    assert s.key == settled.key and s.merged and not s.shrunk_now
    assert [e.key for e in corpus.entries()] == [settled.key]


def test_a_campaign_by_default_queues_the_shrink_and_defers_the_triage_until_the_report(tmp_path):
    from fuzz.campaign.driver import CampaignConfig

    corpus = Corpus(tmp_path / "corpus")
    rec, _ = recorder(tmp_path, corpus, triage=CampaignConfig().triage)
    p = program(PAD, marks=["dynamic"], backend="inductor")
    fresh = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=1, where="output 0 (v1)")
    rec._finding(0, fresh, p, {})
    assert rec.followups.jobs == [f"shrink:{signature(fresh, p).key}"]  # no triage job: `report` runs it
