"""A correct backend is never flagged on the features the generator reaches.

That each feature is reached and its bug seen and shrunk to a program that
keeps the feature is tests/test_campaign.py's
test_one_planted_bug_gives_one_entry (SEEN_AS), one campaign per backend of
fuzz/planted.py."""

import pytest

from fuzz.campaign.driver import CampaignConfig, run_campaign
from fuzz.campaign.progress import Progress

pytestmark = pytest.mark.campaign  # a 150-case campaign


def test_a_correct_backend_is_never_flagged_on_the_new_features(tmp_path):
    """passthrough runs the graph as it is: matmuls, strides, aliasing inputs,
    narrow ints, data-dependent ops and gradients all agree with eager."""
    cfg = CampaignConfig(backend="fuzz.planted:passthrough", seed=5, state_dir=str(tmp_path / "state"),
                         corpus_dir=str(tmp_path / "corpus"), workers=0, shrink=False, triage=False, max_cases=150)
    summary = run_campaign(cfg, progress=Progress(live=False)).summary
    assert summary["cases"] == 150
    assert not summary["findings_new"], summary
