"""The generator reaches each feature it claims, and the oracle sees a bug
there: a 300-case campaign with default flags against a backend wrong only
for that feature finds it, and the finding shrinks to a small program that
still has the feature (fuzz/planted.py)."""

import json

import pytest

from fuzz.campaign.driver import CampaignConfig, run_campaign
from fuzz.campaign.progress import Progress
from fuzz.findings.corpus import Corpus
from fuzz.findings.shrink import shrink
from fuzz.judge.verdict import Outcome
from fuzz.program.opdb import OPS

pytestmark = pytest.mark.campaign  # each test runs a campaign until a planted bug is reached


def _finding(tmp_path, backend, outcome, seed=3):
    """The first new finding with `outcome` in a campaign of at most 300 cases
    (it stops after a dozen findings: a backend built on AOTAutograd also meets
    AOTAutograd's own bugs)."""
    cfg = CampaignConfig(backend=backend, seed=seed, state_dir=str(tmp_path / "state"),
                         corpus_dir=str(tmp_path / "corpus"), workers=0, shrink=False, triage=False,
                         max_cases=300, max_findings=12)
    summary = run_campaign(cfg, progress=Progress(live=False)).summary
    path = tmp_path / "state" / "findings.jsonl"
    findings = [json.loads(line) for line in open(path)] if path.exists() else []
    found = [f for f in findings if f["outcome"] == outcome.value and not f.get("known")]
    assert found, f"{backend}: no {outcome.value} in {summary['cases']} cases: {[f['text'] for f in findings]}"
    corpus = Corpus(tmp_path / "corpus")
    return summary, corpus.load(corpus.path_of(found[0]["key"]))


def _has_family(p, family):
    return any(OPS[c.op].family == family for c in p.ops)


# backend, the outcome it causes, what the shrunk program must still have
CASES = [
    ("fuzz.planted:wrong_after_matmul", Outcome.DIVERGENCE, lambda p: _has_family(p, "matrix")),
    ("fuzz.planted:wrong_strides", Outcome.STRIDE, lambda p: True),
    ("fuzz.planted:breaks_on_alias", Outcome.DIVERGENCE, lambda p: any(x.alias for x in p.inputs)),
    ("fuzz.planted:widens_narrow_ints", Outcome.DIVERGENCE,
     lambda p: any(x.dtype in ("uint8", "int8", "int16") for x in p.inputs)),
    ("fuzz.planted:wrong_with_data_dependent", Outcome.DIVERGENCE, lambda p: _has_family(p, "data")),
    ("fuzz.planted:wrong_gradients", Outcome.GRADIENT, lambda p: p.settings.backward),
]


@pytest.mark.parametrize("backend,outcome,keeps", CASES, ids=[c[0].split(":")[1] for c in CASES])
def test_each_feature_is_reached_seen_and_shrunk(tmp_path, backend, outcome, keeps):
    summary, entry = _finding(tmp_path, backend, outcome)
    assert keeps(entry.program), "the finding does not have the feature its backend breaks"
    res = shrink(entry.program, entry.signature.key, time_budget=120, reruns=1)
    assert res.reproduced and keeps(res.program)
    assert len(res.program.ops) <= 3 and len(res.program.inputs) <= 2, res.program.to_json()
    print(f"{backend}: found after {summary['cases']} cases; shrunk {len(entry.program.ops)} -> "
          f"{len(res.program.ops)} ops")


def test_a_correct_backend_is_never_flagged_on_the_new_features(tmp_path):
    """passthrough runs the graph as it is: matmuls, strides, aliasing inputs,
    narrow ints, data-dependent ops and gradients all agree with eager."""
    cfg = CampaignConfig(backend="fuzz.planted:passthrough", seed=5, state_dir=str(tmp_path / "state"),
                         corpus_dir=str(tmp_path / "corpus"), workers=0, shrink=False, triage=False, max_cases=150)
    summary = run_campaign(cfg, progress=Progress(live=False)).summary
    assert summary["cases"] == 150
    assert not summary["findings_new"], summary
