"""A campaign knows the corpus its user has (fuzz/findings/reference.py): a finding of a cause a reference
corpus holds is counted under that corpus's row, with its status and upstream link, set aside in known/,
and never written as a new entry; causes the reference does not hold still are."""

import json
import os
from pathlib import Path

import pytest

from fuzz.findings.store.corpus import KNOWN, Corpus
from fuzz.findings.signature import minimal_signature, signature
from fuzz.judge.runner import run_case

from helpers import program

PLANT = "fuzz.planted:corrupt_large"


def _finding(ops, marks=("dynamic",)):
    p = program(ops, marks=list(marks), backend=PLANT)
    v = run_case(p)
    assert v.is_finding, v
    return p, v


@pytest.fixture(scope="module")
def relu_finding():
    return _finding([("relu", ["x0"], {})])


@pytest.fixture
def reference(tmp_path, relu_finding):
    """A reference corpus holding one bug, known upstream by a rule."""
    ref = Corpus(tmp_path / "reference")
    p, v = relu_finding
    entry, _ = ref.record(p, v, minimal_signature(v, p))
    (tmp_path / "reference" / "known_issues.json").write_text(json.dumps(
        [{"signature": entry.name, "url": "https://github.com/pytorch/pytorch/issues/1"}]))
    return tmp_path / "reference", entry.name


def test_a_key_the_reference_holds_is_counted_there_and_no_entry_is_written(tmp_path, reference, relu_finding):
    from fuzz.findings.report.bugs import bug_rows, markdown
    from fuzz.findings.reference import Reference, write_reference

    root, key = reference
    ref = Reference(root)
    p, v = relu_finding
    row = ref.for_key(minimal_signature(v, p).key)
    assert row is not None and row.key == key and row.status == "known upstream" and "issues/1" in row.upstream
    assert ref.for_key(signature(v, p).key) is None  # the provisional key of a program it never absorbed

    campaign = tmp_path / "campaign"
    write_reference(campaign, root)
    corpus = Corpus(campaign)
    from fuzz.findings.reference import set_known

    path, _ = corpus.record(p, v, minimal_signature(v, p))
    moved = set_known(corpus, path, row)
    assert moved.parent.name == KNOWN and list(corpus.entries()) == []
    assert corpus.resolve(key) == moved  # a later hit of its key is counted there
    corpus.record(p, v, minimal_signature(v, p))
    assert json.loads((moved / "meta.json").read_text())["hits"] == 2
    text = markdown(bug_rows(campaign), campaign)
    assert "already in the reference corpus" in text and key in text and "issues/1" in text


def test_a_shrunk_entry_of_a_cause_the_reference_holds_is_set_aside_by_its_settle(tmp_path, reference):
    """Matched by cause, not key: another minimal key (the dim marked otherwise) of the same trigger and
    symptom is the reference row's; an entry of another cause stays an entry."""
    from fuzz.findings.dedupe import settle
    from fuzz.findings.reference import write_reference

    root, key = reference
    campaign = tmp_path / "campaign"
    write_reference(campaign, root)
    corpus = Corpus(campaign)
    p, v = _finding([("relu", ["x0"], {})], marks=())
    same, _ = corpus.record(p, v, minimal_signature(v, p))
    assert same.name != key
    q, w = _finding([("cumsum", ["x0"], {"dim": 0})])
    other, _ = corpus.record(q, w, minimal_signature(w, q))
    s = settle(corpus, same, timeout=120)
    assert s.known is not None and s.known.key == key and s.path.parent.name == KNOWN, s.line()
    assert "reference corpus" in s.line()
    assert [e.key for e in corpus.entries()] == [other.name]
    meta = json.loads((s.path / "meta.json").read_text())
    assert meta["reference"]["entry"] == key and meta["reference"]["status"] == "known upstream"


def test_without_a_reference_nothing_is_set_aside(tmp_path, relu_finding):
    from fuzz.findings.dedupe import settle

    corpus = Corpus(tmp_path / "c")
    p, v = relu_finding
    path, _ = corpus.record(p, v, minimal_signature(v, p))
    s = settle(corpus, path, timeout=120)
    assert s.known is None and s.path.parent == tmp_path / "c"


def test_the_reference_is_named_never_found_in_the_working_directory(tmp_path, monkeypatch):
    """--known-corpus names it; by default it is the checkout's own corpus; a corpus/ (and its rules) in
    the directory a campaign starts in is never read."""
    from fuzz.campaign.driver import CampaignConfig, reference_corpus, rules_path
    from fuzz.campaign.state import StateError
    from fuzz.findings.reference import package_corpus

    here = tmp_path / "cwd"
    (here / "corpus").mkdir(parents=True)
    (here / "corpus" / "known_issues.json").write_text(json.dumps([{"outcome": "divergence", "url": "x"}]))
    monkeypatch.chdir(here)
    monkeypatch.delenv("SHAPEFUZZ_KNOWN_CORPUS", raising=False)
    cfg = CampaignConfig(state_dir=str(tmp_path / "s"), corpus_dir=str(tmp_path / "s" / "corpus"))
    shipped = package_corpus()
    assert shipped is not None and shipped.resolve() == (Path(__file__).resolve().parent.parent / "corpus")
    assert reference_corpus(cfg) == str(shipped)
    assert rules_path(cfg) == os.path.join(str(shipped), "known_issues.json")
    cfg.known_corpus = "none"
    assert reference_corpus(cfg) is None and rules_path(cfg) is None
    cfg.known_corpus = str(tmp_path / "missing")
    with pytest.raises(StateError, match="no reference corpus"):
        reference_corpus(cfg)


def test_a_malformed_reference_file_is_one_line(tmp_path):
    from fuzz.findings.store.corpus_files import CorpusFileError
    from fuzz.findings.reference import REFERENCE_FILE, reference_root

    (tmp_path / REFERENCE_FILE).write_text(json.dumps({"corpus": "relative/path"}))
    with pytest.raises(CorpusFileError, match="corpus"):
        reference_root(tmp_path)
    (tmp_path / REFERENCE_FILE).write_text(json.dumps({"corpus": str(tmp_path)}))  # itself: no reference
    assert reference_root(tmp_path) is None


@pytest.mark.campaign
def test_a_campaign_counts_a_cause_of_its_reference_under_that_row_and_writes_no_entry(tmp_path):
    """In-process (workers=0): the planted bug seed 4 meets at case 3 is held by the reference (its minimal
    entry, the provisional key in its index): the campaign counts the case under the reference row, keeps
    the program in known/, queues no follow-up, and counts no distinct bug."""
    from fuzz.campaign.driver import CampaignConfig, run_campaign
    from fuzz.campaign.progress import Progress
    from fuzz.files import dumps

    def campaign(state, known_corpus):
        cfg = CampaignConfig(backend=PLANT, seed=4, max_cases=4, state_dir=str(tmp_path / state),
                             corpus_dir=str(tmp_path / state / "corpus"), workers=0, shrink=False, triage=False,
                             known_corpus=known_corpus)
        return run_campaign(cfg, progress=Progress(live=False))

    first = campaign("first", "none")
    (found,) = [Corpus(tmp_path / "first" / "corpus").load(e) for e in first.new_entries]
    ref = Corpus(tmp_path / "ref")
    held, _ = ref.record(found.program, found.verdict, minimal_signature(found.verdict, found.program))
    (tmp_path / "ref" / ".index.json").write_text(dumps({"version": 1, "keys": {found.key: held.name}}))
    second = campaign("second", str(tmp_path / "ref"))
    assert second.new_entries == [] and second.summary["bugs"] == 0, second.summary
    corpus = Corpus(tmp_path / "second" / "corpus")
    assert list(corpus.entries()) == [] and corpus.resolve(found.key).parent.name == KNOWN
    cases = [json.loads(x) for x in (tmp_path / "second" / "cases.jsonl").read_text().splitlines()]
    assert {c["known"] for c in cases if c.get("known")} == {f"reference:{held.name}"}
    assert not (tmp_path / "second" / "jobs.jsonl").exists() or \
        "queued" not in (tmp_path / "second" / "jobs.jsonl").read_text()
