"""The measure of what users get for follow-up time: jobs.jsonl records a job's CPU-seconds by kind
(fuzz/cputime.py), and scripts/followup_cost.py reads them with the cases and the corpus."""

import json
import sys

from fuzz import cputime
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.signature import signature
from fuzz.judge.isolated import run_command
from fuzz.judge.verdict import Outcome, Stage, Verdict

from helpers import program, script_module


def followup_cost():
    return script_module("followup_cost")


def test_a_checks_child_process_cpu_is_counted_on_the_thread_that_ran_it(tmp_path):
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\nprint('x' * 200000)"
    with cputime.metered(in_process=False) as cpu:
        rc, out, err = run_command([sys.executable, "-c", busy], timeout=60, env={}, cwd=tmp_path)
    assert rc == 0 and len(out) == 200001  # more than a pipe holds: read while it ran
    assert cpu["checks"] >= 0.25 and "runner" in cpu
    with cputime.metered(in_process=False) as cpu:
        rc, _, _ = run_command([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5, env={}, cwd=tmp_path)
    assert rc is None  # past its timeout: killed


def _state(tmp_path):
    state, corpus = tmp_path / "state", Corpus(tmp_path / "corpus")
    state.mkdir()
    t0 = 1000.0
    (state / "cases.jsonl").write_text("".join(json.dumps({"i": i, "outcome": "ok", "at": t0 + i}) + "\n"
                                               for i in range(200)))
    v = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=1, where="output 0 (v0)")
    p = program([("relu", ["x0"], {})])
    sig = signature(v, p)
    corpus.record(p, v, sig)
    findings = [{"i": 5, "outcome": "divergence", "key": sig.key, "known": None, "time": t0 + 5.5},
                {"i": 9, "outcome": "divergence", "key": sig.key, "known": None, "time": t0 + 9},
                {"i": 7, "outcome": "compiled-only-error", "key": "k", "known": "https://x/1", "time": t0 + 7}]
    (state / "findings.jsonl").write_text("".join(json.dumps(f) + "\n" for f in findings))
    jobs = [{"job": f"shrink:{sig.key}", "event": "queued", "type": "shrink", "entry": sig.key, "time": t0 + 6},
            {"job": f"shrink:{sig.key}", "event": "started", "time": t0 + 10},
            {"job": f"shrink:{sig.key}", "event": "done", "time": t0 + 40,
             "cpu": {"compute": 20.0, "checks": 4.0, "runner": 1.0}},
            {"job": f"triage:{sig.key}", "event": "queued", "type": "triage", "entry": sig.key, "time": t0 + 6},
            {"job": f"triage:{sig.key}", "event": "started", "time": t0 + 40},
            {"job": f"triage:{sig.key}", "event": "done", "time": t0 + 52, "cpu": {"compute": 10.0, "runner": 0.5}}]
    (state / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    (state / "state.json").write_text(json.dumps({"corpus_dir": str(corpus.root)}))
    return state


def test_the_benchmark_reads_rates_costs_bugs_and_the_time_to_each(tmp_path, capsys):
    fc = followup_cost()
    f = fc.figures(_state(tmp_path), None, 60.0, 30.0)
    assert f["cases"] == 200 and f["overall"] == round(200 / 199, 3) and f["steady"] == round(110 / 109, 3)
    assert f["jobs"]["shrink"] == {"jobs": 1, "median_wall_s": 30.0, "median_cpu_s": 21.0, "median_checks_cpu_s": 4.0}
    assert f["jobs"]["triage"]["median_cpu_s"] == 10.5 and f["cpu_recorded"]
    assert f["followup_s_per_entry_median"] == 35.5 and f["pending"] == 0
    assert f["entries"] == 1 and f["unshrunk"] == 1 and f["known_hits"] == 1 and f["known_rules"] == 1
    assert f["time_to_bug_s"] == [5.5]
    assert fc.main([str(tmp_path / "state"), "--label", "new"]) == 0
    assert "| distinct bugs (unshrunk) | 1 (1) |" in capsys.readouterr().out
