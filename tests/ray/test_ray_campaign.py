"""`shapefuzz run --ray` against a real Ray cluster of three nodes on this
machine (a head and two workers, `ray start --num-cpus 1` each): a seed gives
the same cases, outcomes and findings as the run without Ray; a worker node
killed mid-campaign loses nothing (its cases in flight are judged by another
node, each case recorded once); a driver killed mid-campaign is resumed by
the same command."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from raycluster import ROOT, env

pytest.importorskip("ray")


def run_cmd(state, corpus, n, backend="aot_eager", seed=1, ray=None, followups=False):
    # blind draws: the planted seeds here were counted on their streams (as in tests/test_campaign.py)
    cmd = [sys.executable, "-m", "fuzz", "run", "--backend", backend, "--max-cases", str(n), "--seed", str(seed),
           "--state", str(state), "--corpus", str(corpus), "--draw", "blind"]
    # --triage: the triage, deferred to the report by default, is a follow-up the cluster computes too
    cmd += ["--shrink-budget", "20", "--triage"] if followups else ["--no-shrink", "--no-triage"]
    return cmd + (["--ray", ray] if ray else ["--workers", "1"])


def lines(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def fresh_corpus(tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    (d / "known_issues.json").write_text(open(os.path.join(ROOT, "corpus", "known_issues.json")).read())
    return d


def outcomes(state, below=None):
    """case -> outcome (of the cases below `below`: a seed's first cases are the same in a longer run)."""
    return {c["i"]: c["outcome"] for c in lines(state / "cases.jsonl") if below is None or c["i"] < below}


def findings(state, below=None):
    return {(f["i"], f["key"]) for f in lines(state / "findings.jsonl") if below is None or f["i"] < below}


def run(cmd, timeout=300):
    r = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=timeout)
    assert r.returncode in (0, 1), r.stdout[-3000:] + r.stderr[-3000:]
    return r


PLANTED, PLANTED_SEED, N = "fuzz.planted:corrupt_large", 4, 12  # seed 4: findings in the first cases
N_KILL = 40  # the node-kill run (at 24, once the generator drew unbacked sizes, no worker node had judged a case by case 16): long enough that every node still has cases in flight when one is killed


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The run without Ray (one sandboxed worker) of (backend, seed, n), once per module."""
    done = {}

    def get(backend, seed, n, followups=False):
        if (backend, seed, n, followups) not in done:
            d = tmp_path_factory.mktemp("ref")
            run(run_cmd(d / "st", fresh_corpus(d, "corpus"), n, backend, seed, followups=followups))
            done[backend, seed, n, followups] = d / "st"
        return done[backend, seed, n, followups]

    return get


def test_a_seed_gives_the_same_outcomes_and_findings_with_and_without_ray(tmp_path, three_nodes, reference):
    """aot_eager, seed 1, 16 cases, sharded over the three nodes. (The findings of a planted bug are compared
    with the run without Ray by the two kill tests below.)"""
    n = 16
    ref = reference("aot_eager", 1, n)
    st = tmp_path / "st"
    r = run(run_cmd(st, fresh_corpus(tmp_path, "c"), n, "aot_eager", 1, ray=three_nodes.address))
    assert sorted(outcomes(ref)) == list(range(n))
    assert sorted(c["i"] for c in lines(st / "cases.jsonl")) == list(range(n)), "each case judged once"
    assert outcomes(st) == outcomes(ref), "the same outcome for every case"
    assert findings(st) == findings(ref), "the same findings"
    nodes = {c.get("node") for c in lines(st / "cases.jsonl")}
    assert len(nodes) == 3 and None not in nodes, f"sharded over the three nodes: {nodes}"
    snap = json.load(open(st / "state.json"))
    assert len(snap["nodes"]) == 3 and sum(v["cases"] for v in snap["nodes"].values()) == n
    assert "ray nodes" in r.stdout and "3 nodes" in r.stdout, r.stdout[-3000:]


def entries(corpus):
    return sorted(d.name for d in corpus.iterdir() if d.is_dir() and not d.name.startswith("."))


def test_follow_ups_are_computed_on_the_cluster_and_settle_as_without_ray(tmp_path, three_nodes, reference):
    """A planted storage error (seed 4, 12 cases): its entry is shrunk, re-keyed and triaged by tasks on
    the cluster, written into the driver's corpus, and ends as the run without Ray ends it. The campaign
    (--no-wait) starts them; `shapefuzz followup --ray` finishes what it left."""
    backend, n = "fuzz.planted:storage_error_on_pad", 12
    ref = reference(backend, 4, n, followups=True)
    st, corpus = tmp_path / "st", fresh_corpus(tmp_path, "c")
    run(run_cmd(st, corpus, n, backend, 4, ray=three_nodes.address, followups=True) + ["--no-wait"])
    f = run([sys.executable, "-m", "fuzz", "followup", str(st), "--corpus", str(corpus), "--ray", three_nodes.address])
    assert "0 pending" in f.stdout, f.stdout[-3000:] + f.stderr[-3000:]
    log = open(st / "followup.log").read()
    assert "shrink of" in log and "triage of" in log and "computed on node" in log, log[-3000:]
    jobs = [r for r in lines(st / "jobs.jsonl") if r["event"] in ("done", "skipped", "failed")]
    assert jobs and all(r["event"] == "done" for r in jobs), jobs
    assert entries(corpus) == entries(ref.parent / "corpus") and entries(corpus), log[-3000:]
    for e in entries(corpus):
        d = corpus / e
        assert "shrink" in json.load(open(d / "meta.json")) and (d / "original_program.json").exists()
        assert json.load(open(d / "ablation.json"))["program"] == json.load(open(d / "program.json"))


def test_the_driver_killed_mid_campaign_resumes_with_the_same_command(tmp_path, three_nodes, reference):
    st, corpus = tmp_path / "st", fresh_corpus(tmp_path, "c")
    cmd = run_cmd(st, corpus, N, PLANTED, PLANTED_SEED, ray=three_nodes.address)
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 240
    while len(lines(st / "cases.jsonl")) < 4 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, "finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)  # the driver only: Ray ends its actors, they end their workers
    proc.wait()
    killed_at = len(lines(st / "cases.jsonl"))
    assert killed_at < N
    ref = reference(PLANTED, PLANTED_SEED, N_KILL)  # while Ray ends the dead driver's actors (seconds)
    deadline = time.time() + 60
    while _titled("ray::NodeJudge") and time.time() < deadline:
        time.sleep(0.5)
    assert not _titled("ray::NodeJudge"), "the dead driver's node actors (and their workers) are gone"
    run(cmd)
    cases = [c["i"] for c in lines(st / "cases.jsonl")]
    assert sorted(cases) == list(range(N)), "every case judged exactly once over the two sessions"
    got = [(f["i"], f["key"]) for f in lines(st / "findings.jsonl")]
    assert len(got) == len(set(got)), "no finding recorded twice"
    assert set(got) == findings(ref, N) and got, "the findings of the run without Ray"
    assert outcomes(st) == outcomes(ref, N)


def test_ctrl_c_stops_a_ray_local_campaign_cleanly(tmp_path):
    """Ctrl-C (SIGINT to the driver's group, the Ray it started included) stops a --ray local campaign
    as without Ray: exit 130, the state saved, and nothing of the run left behind."""
    st = tmp_path / "st"
    proc = subprocess.Popen(run_cmd(st, fresh_corpus(tmp_path, "c"), 500, ray="local"), env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # not an inherited SIG_IGN
    deadline = time.time() + 240
    while len(lines(st / "cases.jsonl")) < 3 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the driver's whole group
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err[-3000:]
    assert "resume" in err
    snap = json.load(open(st / "state.json"))
    assert 3 <= snap["cases"] == len(lines(st / "cases.jsonl")) < 500
    time.sleep(2)
    left = [p for p in os.listdir("/proc") if p.isdigit() and _pgid(int(p)) == proc.pid]
    assert not left, "nothing of the run is left (its workers, its Ray)"


def _titled(prefix):
    """Processes whose command line (a Ray worker's title) starts with prefix."""
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if open(f"/proc/{p}/cmdline", "rb").read().startswith(prefix.encode()):
                    out.append(int(p))
            except OSError:
                pass
    return out


def _pgid(pid):
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return -1


def test_a_worker_node_killed_mid_campaign_loses_nothing(tmp_path, three_nodes, reference):
    st = tmp_path / "st"
    proc = subprocess.Popen(run_cmd(st, fresh_corpus(tmp_path, "c"), N_KILL, PLANTED, PLANTED_SEED,
                                    ray=three_nodes.address),
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        ids = {three_nodes.node_id(w)[:6]: w for w in ("w1", "w2")}  # as the campaign names nodes: host:<6 digits>
        deadline = time.time() + 240
        victim = None
        while victim is None and proc.poll() is None and time.time() < deadline:
            cases = lines(st / "cases.jsonl")
            # the first worker node up and judging, while more cases are left than the nodes hold (2 each: one
            # running, one queued): it has cases in flight when it is killed
            up = [i for i in ids if any(c["node"].endswith(i) for c in cases)]
            victim = up[0] if up and len(cases) <= N_KILL - 8 else None
            time.sleep(0.05)
        assert victim, "a worker node judged cases early enough"
        before = len(lines(st / "cases.jsonl"))
        three_nodes.kill(ids[victim])  # a lost machine: raylet, agents, the actor and its sandboxed workers
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode in (0, 1), out[-4000:]
    assert before < N_KILL, "killed mid-campaign"
    cases = [c["i"] for c in lines(st / "cases.jsonl")]
    assert sorted(cases) == list(range(N_KILL)), "every case judged exactly once"
    got = [(f["i"], f["key"]) for f in lines(st / "findings.jsonl")]
    assert len(got) == len(set(got)), "no finding recorded twice"
    ref = reference(PLANTED, PLANTED_SEED, N_KILL)  # the driver-kill test's, where it ran first
    assert set(got) == findings(ref) and got, "no finding lost"
    assert outcomes(st) == outcomes(ref)
    assert f"{victim} lost" in out and "go to another node" in out, out[-4000:]
    assert not any(c["node"].endswith(victim) for c in lines(st / "cases.jsonl")[before + 2:]), \
        "nothing judged on the lost node after it was lost (but what it sent back just before)"
    snap = json.load(open(st / "state.json"))
    assert snap["restarts"].get("node-lost", 0) >= 1
    assert sum(1 for v in snap["nodes"].values() if v["state"] == "lost") == 1
    print(f"killed a node after {before}/{N_KILL} cases; {len(cases)} cases, {len(got)} findings")
    print("\n".join(line for line in out.splitlines() if line.startswith("ray: ")))
