"""--coverage: the compiler lines each case reaches (fuzz/judge/coverage.py), kept once per campaign in
its state dir. sys.monitoring needs Python 3.12: where it is missing the flag is refused, and the tests of
the measuring itself skip (they run on the GPU box, Python 3.12)."""

import json
import os
import subprocess
import sys

import pytest

from fuzz.campaign.state import CampaignState
from fuzz.judge import coverage

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MONITORING = pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring needs Python 3.12+")


def test_a_state_dir_keeps_each_line_once_across_sessions(tmp_path):
    st = CampaignState.open(str(tmp_path / "st"), {"seed": 0})
    assert st.record_coverage(["_inductor/graph.py:10", "_dynamo/eval_frame.py:3"]) == 2
    assert st.record_coverage(["_inductor/graph.py:10", "_inductor/graph.py:11", "bad\nline", 7]) == 1
    st.record_case(0, {"outcome": "ok"}, 0.1, new_lines=2)
    assert st.summary()["compiler_lines"] == 3
    st.close()
    again = CampaignState.open(str(tmp_path / "st"), {"seed": 0})
    assert again.lines == {"_inductor/graph.py:10", "_inductor/graph.py:11", "_dynamo/eval_frame.py:3"}
    assert again.record_coverage(["_dynamo/eval_frame.py:3"]) == 0
    case = json.loads((tmp_path / "st" / "cases.jsonl").read_text().splitlines()[0])
    assert case["new_lines"] == 2
    again.close()
    without = CampaignState.open(str(tmp_path / "other"), {"seed": 0})
    assert "compiler_lines" not in without.summary(), "a campaign without --coverage shows no count"
    without.close()


def test_the_flag_is_refused_where_it_cannot_measure(tmp_path):
    argv = [sys.executable, "-m", "fuzz", "run", "--coverage", "--workers", "0", "--max-cases", "1",
            "--state", str(tmp_path / "st"), "--corpus", str(tmp_path / "c")]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    why = "needs Python 3.12" if coverage.available() else "not with --workers 0"
    assert why in r.stderr, r.stderr
    assert not (tmp_path / "st").exists()


@MONITORING
def test_compiler_lines_are_reported_once_per_process():
    import torch

    lines = coverage.CompilerLines().start()
    try:
        f = torch.compile(lambda x: (x + 1).relu().sum(0), backend="aot_eager", dynamic=True)
        f(torch.randn(5, 3))
        first = lines.take()
        assert any(x.startswith("_dynamo/") for x in first) and any(x.startswith("_functorch/") for x in first)
        assert all(":" in x and not x.startswith("/") for x in first)
        f(torch.randn(7, 3))  # no recompile: guards pass, little new compiler code runs
        second = lines.take()
        assert not set(second) & set(first) and len(second) < len(first) // 10, len(second)
    finally:
        lines.stop()


@MONITORING
def test_a_campaign_counts_the_lines_its_cases_reach(tmp_path):
    state, corpus = tmp_path / "st", tmp_path / "c"
    argv = [sys.executable, "-m", "fuzz", "run", "--backend", "aot_eager", "--coverage", "--workers", "1",
            "--max-cases", "4", "--no-shrink", "--no-triage", "--state", str(state), "--corpus", str(corpus)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode in (0, 1), r.stderr[-2000:]
    cases = [json.loads(x) for x in (state / "cases.jsonl").read_text().splitlines()]
    assert len(cases) == 4 and all("new_lines" in c for c in cases)
    total = len((state / "coverage.txt").read_text().splitlines())
    assert cases[0]["new_lines"] > 100 and sum(c["new_lines"] for c in cases) == total
    assert json.loads((state / "state.json").read_text())["compiler_lines"] == total
    assert "compiler lines" in r.stdout
