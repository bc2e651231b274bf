"""Campaign state: resume after SIGKILL with nothing lost or duplicated,
clean Ctrl-C, stats, and findings bucketed into the corpus."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLANTED = "fuzz.planted:corrupt_large"


def run_cmd(state, corpus, n, backend=PLANTED, workers="1", extra=("--no-shrink", "--no-triage")):
    return [sys.executable, "-m", "fuzz", "run", "--backend", backend, "--max-cases", str(n), "--seed", "4",
            "--state", str(state), "--corpus", str(corpus), "--workers", workers] + list(extra)


def env():
    return dict(os.environ, PYTHONPATH=ROOT)


def lines(path):
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out


def fresh_corpus(tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    shutil.copy(os.path.join(ROOT, "corpus", "known_issues.json"), d)
    return d


def test_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path):
    n = 40
    ref_state, ref_corpus = tmp_path / "ref", fresh_corpus(tmp_path, "ref_corpus")
    r = subprocess.run(run_cmd(ref_state, ref_corpus, n), env=env(), capture_output=True, text=True, timeout=900)
    assert r.returncode == 1, r.stderr[-2000:]
    ref_findings = {(f["i"], f["key"]) for f in lines(ref_state / "findings.jsonl")}
    assert ref_findings

    state, corpus = tmp_path / "st", fresh_corpus(tmp_path, "corpus")
    proc = subprocess.Popen(run_cmd(state, corpus, n), env=env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 600
    while len(lines(state / "cases.jsonl")) < 12 and time.time() < deadline:
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)  # the parent only; its workers notice and exit
    proc.wait()
    killed_at = len(lines(state / "cases.jsonl"))
    assert 12 <= killed_at < n

    r = subprocess.run(run_cmd(state, corpus, n), env=env(), capture_output=True, text=True, timeout=900)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    cases = [c["i"] for c in lines(state / "cases.jsonl")]
    assert sorted(cases) == list(range(n)), "every case judged exactly once"
    findings = [(f["i"], f["key"]) for f in lines(state / "findings.jsonl")]
    assert len(findings) == len(set(findings)), "no finding recorded twice"
    assert set(findings) == ref_findings, "same findings as an uninterrupted run"
    entries = sorted(d for d in os.listdir(corpus) if not d.startswith(".") and d != "known_issues.json")
    assert entries == sorted({k for _, k in findings})
    print(f"killed after {killed_at}/{n} cases; resumed to {len(cases)} cases, {len(findings)} findings, "
          f"{len(entries)} corpus entries (reference: {len(ref_findings)} findings)")


def test_ctrl_c_stops_cleanly_and_stats_reads_state(tmp_path):
    state, corpus = tmp_path / "st", fresh_corpus(tmp_path, "corpus")
    proc = subprocess.Popen(run_cmd(state, corpus, 500, backend="eager"), env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 600
    while len(lines(state / "cases.jsonl")) < 3 and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "resume" in err
    snap = json.load(open(state / "state.json"))
    assert snap["cases"] == len(lines(state / "cases.jsonl")) >= 3
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    children = [p for p in pids if _ppid(p) == proc.pid]
    assert not children
    stats = subprocess.run([sys.executable, "-m", "fuzz", "stats", str(state), "--json"], env=env(),
                           capture_output=True, text=True, timeout=120)
    assert stats.returncode == 0 and json.loads(stats.stdout)["cases"] == snap["cases"]


def _ppid(pid):
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_other_settings_on_the_same_state_dir_are_refused(tmp_path):
    state, corpus = tmp_path / "st", fresh_corpus(tmp_path, "corpus")
    r = subprocess.run(run_cmd(state, corpus, 2, backend="eager", workers="0"), env=env(), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(run_cmd(state, corpus, 2, backend="aot_eager", workers="0"), env=env(), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 2 and "other settings (backend)" in r.stderr


def test_stats_on_a_missing_dir_is_a_clear_error(tmp_path):
    r = subprocess.run([sys.executable, "-m", "fuzz", "stats", str(tmp_path / "nope")], env=env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "not a campaign state dir" in r.stderr


def test_new_entries_are_shrunk_and_triaged_in_the_background(tmp_path):
    state, corpus = tmp_path / "st", fresh_corpus(tmp_path, "corpus")
    cmd = run_cmd(state, corpus, 25, backend="fuzz.planted:storage_error_on_pad", workers="0",
                  extra=("--shrink-budget", "60"))
    r = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=900)
    assert r.returncode == 1, r.stderr[-2000:]
    entries = [corpus / d for d in os.listdir(corpus) if (corpus / d).is_dir() and not d.startswith(".")]
    assert entries
    for e in entries:
        meta = json.load(open(e / "meta.json"))
        assert "shrink" in meta and (e / "original_program.json").exists(), open(state / "followup.log").read()[-2000:]
        assert len(json.load(open(e / "program.json"))["ops"]) <= len(json.load(open(e / "original_program.json"))["ops"])
        ablation = json.load(open(e / "ablation.json"))  # of the shrunk program: triage runs after the shrink
        assert ablation["program"] == json.load(open(e / "program.json")), open(state / "followup.log").read()[-2000:]


def test_followup_jobs_run_in_order_and_are_bounded(tmp_path, monkeypatch):
    from fuzz.campaign.driver import BackgroundJobs

    monkeypatch.setenv("PYTHONPATH", ROOT)
    log = tmp_path / "followup.log"
    jobs = BackgroundJobs(str(log))
    jobs.add(["sanitize", str(tmp_path)], timeout=120)  # fails fast: not an entry
    # a campaign that would run for an hour, cut by the job's own timeout
    jobs.add(["run", "--backend", "eager", "--time", "1h", "--workers", "0", "--no-shrink",
              "--state", str(tmp_path / "st"), "--corpus", str(tmp_path / "c")], timeout=3)
    assert jobs.pending == 2
    start = time.monotonic()
    jobs.finish(lambda s: None)
    assert jobs.pending == 0 and jobs.finished == 2 and time.monotonic() - start < 60
    text = log.read_text()
    assert text.index("--- sanitize") < text.index("--- run") and "not a corpus entry" in text


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_same_flags_reopen_the_state_dir(tmp_path, device):
    """The CUDA config holds tuples (mode and flag menus); it must compare
    equal to itself once stored as JSON, or no CUDA campaign could resume."""
    from fuzz.campaign.driver import CampaignConfig
    from fuzz.campaign.state import CampaignState, StateError

    cfg = CampaignConfig(device=device, state_dir=str(tmp_path / "st"))
    CampaignState.open(cfg.state_dir, cfg.identity())
    CampaignState.open(cfg.state_dir, CampaignConfig(device=device, state_dir=cfg.state_dir).identity())
    with pytest.raises(StateError, match="seed"):
        CampaignState.open(cfg.state_dir, CampaignConfig(device=device, seed=1, state_dir=cfg.state_dir).identity())
