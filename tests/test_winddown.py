"""A timed campaign winds down (fuzz/campaign/followups/winddown.py): its cases stop once
the shrinks pending need the rest of the time, never before the last
LATEST_SHARE of it, and its follow-ups get the machine until the limit."""

import json
import re

import pytest

from fuzz.campaign.followups.runner import JobLog
from fuzz.campaign.followups.winddown import LATEST_SHARE, WindDown, drain_seconds, slow_seconds, wind_down_due


A = "a" * 12  # an entry key


def log_with(tmp_path, done: dict, pending: list) -> JobLog:
    """A job log whose done jobs took the given seconds ({id: (type, seconds)}) and whose `pending` are queued
    (entry keys of 12 hex digits, as the log's schema wants)."""
    jobs = JobLog(str(tmp_path))
    lines = []
    for job_id, (t, took) in done.items():
        lines += [{"job": job_id, "event": "queued", "type": t, "entry": job_id.split(":")[1], "time": 0.0},
                  {"job": job_id, "event": "started", "pid": 1, "time": 100.0},
                  {"job": job_id, "event": "done", "time": 100.0 + took}]
    lines += [{"job": f"{t}:{k:012x}", "event": "queued", "type": t, "entry": f"{k:012x}", "time": 0.0}
              for k, t in enumerate(pending)]
    (tmp_path / "jobs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return jobs.refresh()


def test_a_slow_shrink_is_the_90th_percentile_of_the_done_ones(tmp_path):
    done = {f"shrink:{k:012x}": ("shrink", 10 * k) for k in range(1, 11)}  # 10 s .. 100 s
    done.update({f"triage:{A}": ("triage", 900), f"sanitize:{A}": ("sanitize", 5)})
    assert slow_seconds(log_with(tmp_path, done, [])) == 90  # triages are not counted, sanitizer runs are
    assert slow_seconds(log_with(tmp_path, {f"shrink:{A}": ("shrink", 70)}, [])) == 70
    assert slow_seconds(log_with(tmp_path, {}, []), default=300) == 300


def test_the_drain_counts_the_shrinks_pending_and_one_more_by_rounds_of_slots(tmp_path):
    jobs = log_with(tmp_path, {f"shrink:{A}": ("shrink", 60)}, ["shrink"] * 15 + ["triage"] * 9)
    assert drain_seconds(jobs, slots=16) == 60  # 15 + 1 shrinks: one round on 16 CPUs
    assert drain_seconds(jobs, slots=8) == 120
    assert drain_seconds(log_with(tmp_path, {f"shrink:{A}": ("shrink", 60)}, []), slots=2) == 60


def test_the_wind_down_comes_when_the_drain_needs_the_rest_but_never_early():
    assert not wind_down_due(remaining=600, time_limit=1800, drain=120)
    assert wind_down_due(remaining=120, time_limit=1800, drain=120)
    # a long backlog stops the cases no earlier than the last LATEST_SHARE of the time
    assert not wind_down_due(remaining=LATEST_SHARE * 1800 + 1, time_limit=1800, drain=3000)
    assert wind_down_due(remaining=LATEST_SHARE * 1800, time_limit=1800, drain=3000)


def test_wind_down_once_due_stays_due_and_says_so_once(tmp_path):
    jobs = log_with(tmp_path, {f"shrink:{A}": ("shrink", 60)}, ["shrink"] * 3)
    clock = {"elapsed": 0.0}
    notes = []
    begun = []
    w = WindDown(1800, lambda: clock["elapsed"], lambda: jobs, slots=16, default=300, note=notes.append,
                 begin=lambda: begun.append(1))
    assert not w.due(now=0.0)
    clock["elapsed"] = 1800 - 59
    assert not w.due(now=0.5)  # looked at most once a second
    assert w.due(now=1.0) and w.began
    clock["elapsed"] = 0.0  # (no going back)
    assert w.due(now=2.0) and w.due(now=5.0)
    assert len(notes) == 1 and "3 shrinks pending" in notes[0], notes
    assert begun == [1]  # the follow-ups are told to take every CPU once


@pytest.mark.campaign
@pytest.mark.runner_process  # the wind-down hands the follow-ups the CPUs while the cases still run
def test_a_timed_campaign_stops_its_cases_early_and_gives_the_rest_to_its_followups(tmp_path, monkeypatch):
    """A 30-second campaign whose shrinks would take 10 s winds down 6 s before its
    end (LATEST_SHARE), runs a shrink after its last case, and returns at its
    limit (--no-wait), not when its cases end."""
    import fuzz.campaign.followups.winddown as winddown
    from fuzz.campaign.driver import CampaignConfig, run_campaign
    from fuzz.campaign.progress import Progress

    monkeypatch.setattr(winddown, "drain_seconds", lambda jobs, slots, default: 10.0)
    notes = []
    progress = Progress(live=False)
    monkeypatch.setattr(progress, "note", notes.append)
    cfg = CampaignConfig(backend="fuzz.planted:corrupt_large", seed=4, max_cases=None, time_limit=30, workers=0,
                         triage=False, state_dir=str(tmp_path / "st"), corpus_dir=str(tmp_path / "corpus"))
    res = run_campaign(cfg, progress=progress, wait=False)
    wound = [n for n in notes if n.startswith("winding down")]
    m = re.search(r"in the last (\d+) s", wound[0]) if len(wound) == 1 else None
    assert m and 2 <= int(m.group(1)) <= 6, notes  # 6 s before the end, or when the next case was drawn
    cases = [json.loads(x)["at"] for x in open(tmp_path / "st" / "cases.jsonl") if '"at"' in x]
    # recorded, for scripts/case_rate.py: in this process no case was in flight then
    wound_at = json.load(open(tmp_path / "st" / "state.json"))["wind_down_at"]
    assert wound_at >= max(cases)
    events = [json.loads(x) for x in open(tmp_path / "st" / "jobs.jsonl")]
    ended = {j["job"]: j["time"] for j in events if j["event"] in ("done", "skipped", "failed")}
    waiting = [j["job"] for j in events if j["event"] == "queued" and ended.get(j["job"], wound_at + 1) > wound_at]
    if waiting:  # (almost always: the plant's findings come faster than one runner shrinks them)
        assert any(j["time"] > wound_at and j["event"] != "queued" for j in events), "no follow-up ran in the wind-down"
    # at its limit, unless every follow-up was done before it
    assert res.summary["elapsed"] >= 29.5 or not res.followups["pending"], res.summary
    assert res.summary["cases"] == len(cases)
