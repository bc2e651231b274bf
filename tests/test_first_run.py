"""A newcomer's first run: a run without --corpus saves beside its
state dir and leaves the checkout's corpus/ alone; the per-case timeout never
exceeds --time; the exit code counts the distinct bugs left after the
follow-ups; the first seconds say what the first minute goes to."""

import argparse
import json
import os
import subprocess
import sys
import time

from fuzz.campaign.driver import CampaignConfig, builds_pch
from fuzz.campaign.progress import Progress, startup_line
from fuzz.campaign.state import CampaignState
from fuzz.cli.run import _other_corpus, case_timeout, exit_code
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.signature import signature
from fuzz.findings.standalone import set_aside
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.program.ir import OpCall, Program, TensorInput

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_run_without_corpus_saves_beside_its_state_and_leaves_corpus_alone(tmp_path):
    """Run from a checkout-like dir whose corpus/ is tracked: nothing appears there or beside it."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "known_issues.json").write_text("[]")
    r = subprocess.run([sys.executable, "-m", "fuzz", "run", "--backend", "eager", "--max-cases", "2", "--workers", "0",
                        "--no-shrink", "--no-triage", "--state", "st"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert f"corpus={os.path.join('st', 'corpus')}" in lines[0]
    assert "draw=pair-aimed" in lines[0], "the default draw, said where a user reads what runs"
    assert (tmp_path / "st" / "corpus").is_dir()
    assert sorted(os.listdir(tmp_path)) == ["corpus", "st"] and os.listdir(tmp_path / "corpus") == ["known_issues.json"]
    # what the first minute goes to, before any case; then the first case at once, not 30 s later
    said = next(i for i, line in enumerate(lines) if line.startswith("judging in this process"))
    done = next(i for i, line in enumerate(lines) if "(first case done after" in line)
    assert said < done


def test_the_config_default_corpus_is_beside_the_state_dir():
    assert CampaignConfig(state_dir="runs/x").corpus_dir == os.path.join("runs/x", "corpus")
    assert CampaignConfig(state_dir="runs/x", corpus_dir="mine").corpus_dir == "mine"


def test_a_state_dir_whose_findings_went_elsewhere_resumes_only_naming_that_corpus(tmp_path):
    st = tmp_path / "st"
    st.mkdir()
    args = argparse.Namespace(state=str(st), corpus=None)
    assert _other_corpus(args) is None  # a fresh state dir
    (st / "state.json").write_text(json.dumps({"corpus_dir": str(tmp_path / "old-default" / "corpus")}))
    why = _other_corpus(args)
    assert why and "old-default" in why and "--corpus" in why and "\n" not in why
    assert _other_corpus(argparse.Namespace(state=str(st), corpus=str(tmp_path / "old-default" / "corpus"))) is None
    (st / "state.json").write_text(json.dumps({"corpus_dir": str(st / "corpus")}))  # its own default
    assert _other_corpus(args) is None
    (st / "state.json").write_text(json.dumps({"corpus_dir": ["not", "a", "path"]}))
    assert _other_corpus(args) is None  # not a path: nothing named, nothing written there


def test_the_case_timeout_never_exceeds_the_time_limit():
    assert case_timeout(None, "cpu", 180.0) == 180.0  # --time 3m: not 300 s per case
    assert case_timeout(600.0, "cpu", 60.0) == 60.0  # an explicit --timeout too
    assert case_timeout(None, "cpu", 3600.0) == 300.0 and case_timeout(None, "cuda", 3600.0) == 120.0
    assert case_timeout(None, "cpu") == 300.0  # no time limit


def _finding(c, op):
    p = Program(sizes={"s0": [4, 5, 6]}, inputs=[TensorInput(name="x0", shape=["s0"], marks=["dynamic"])],
                ops=[OpCall(op=op, args=["x0"], params={}, out="v0")], outputs=["v0"])
    v = Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE, call=1, sizes={"s0": 5},
                exc_type="RuntimeError", message=f"{op} went wrong", frames=["/x/torch/_inductor/graph.py:9:run"])
    sig = signature(v, p)
    path, _ = c.record(p, v, sig, env={})
    return sig, path


def test_the_exit_code_counts_the_distinct_bugs_left_after_the_follow_ups(tmp_path):
    """Two new findings, both set aside as unconfirmed by their follow-ups: `distinct bugs 0`, exit 0."""
    c = Corpus(tmp_path / "corpus")
    state = CampaignState.open(str(tmp_path / "st"), CampaignConfig().identity())
    try:
        state.corpus_dir = str(c.root)
        paths = []
        for i, op in enumerate(("relu", "sigmoid")):
            sig, path = _finding(c, op)
            state.record_finding(i, "compiled-only-error", sig.key, sig.text, None, str(path), True)
            paths.append(path)
        summary = state.summary()
        assert sum(summary["findings_new"].values()) == 2 and summary["bugs"] == 2 and exit_code(summary) == 1
        set_aside(c, paths[0])
        assert state.summary()["bugs"] == 1 and exit_code(state.summary()) == 1
        set_aside(c, paths[1])
        summary = state.summary()
        assert summary["bugs"] == 0 and sum(summary["findings_new"].values()) == 2 and exit_code(summary) == 0
    finally:
        state.close()


def test_the_start_says_what_the_first_minute_goes_to(tmp_path, monkeypatch):
    monkeypatch.setenv("SHAPEFUZZ_CACHE", str(tmp_path))  # no header kept yet (other tests may have made one)
    line = startup_line(2, pch=True)
    assert "2 sandboxed workers" in line and "precompiled C++ header" in line and "every 30 s" in line
    assert "precompiled" not in startup_line(2) and "Ray" in startup_line(None, ray=True)
    assert builds_pch(CampaignConfig(backend="inductor", device="cpu"), {})
    assert not builds_pch(CampaignConfig(backend="inductor", device="cpu"),
                          {"TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0"})  # a small cache limit: none made
    assert not builds_pch(CampaignConfig(backend="eager", device="cpu"), {})
    assert not builds_pch(CampaignConfig(backend="inductor", device="cuda"), {})
    from fuzz import pch

    pch.home().mkdir(parents=True)
    (pch.home() / "header.gch").write_bytes(b"x" * 10)  # an earlier run kept one: the start does not wait on it
    assert not builds_pch(CampaignConfig(backend="inductor", device="cpu"), {})


SUMMARY = {"cases": 1, "cases_per_second": 0.01, "findings_new": {}, "findings_known": {}, "bugs": 0, "signatures": 0,
           "followups": {}, "restarts": {}}


def test_progress_prints_while_no_case_finishes_and_at_once_when_the_first_does(capsys):
    with Progress(live=False, every=0.2) as progress:
        progress.waiting = "workers starting"
        time.sleep(0.7)
        waiting = capsys.readouterr().out.splitlines()
        progress.update(SUMMARY)
        first = capsys.readouterr().out.splitlines()
        time.sleep(0.7)
        quiet = capsys.readouterr().out.splitlines()
    assert waiting and all("no case done yet: workers starting" in line for line in waiting)
    assert len(first) == 1 and first[0].startswith("... 1 cases") and "(first case done after" in first[0]
    assert quiet and all("none finished in the last" in line for line in quiet)
    time.sleep(0.5)
    assert capsys.readouterr().out == ""  # the ticker ended with the campaign's cases


def test_run_json_is_the_summary_alone_on_stdout(tmp_path):
    """--json: the start lines and progress go to stderr, so stdout parses whole."""
    r = subprocess.run([sys.executable, "-m", "fuzz", "run", "--backend", "eager", "--max-cases", "1", "--workers", "0",
                        "--no-shrink", "--no-triage", "--state", str(tmp_path / "st"), "--json"], capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=ROOT), cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cases"] == 1
    assert "judging in this process" in r.stderr and "(first case done after" in r.stderr


def test_progress_writes_where_it_is_told(capsys):
    import io

    out = io.StringIO()
    with Progress(file=out, every=60) as progress:
        progress.note("a note")
        progress.update(SUMMARY)
    assert out.getvalue().splitlines()[0] == "a note" and capsys.readouterr().out == ""
