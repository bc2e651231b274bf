"""Replaying a corpus: still-failing, fixed, changed and error entries, the
exit status for CI, and the pytest plugin that turns entries into strict
xfails. Planted backends keep every run cheap."""

import argparse
import json
import shutil

import pytest

from fuzz.program.codegen import repro_source
from fuzz.findings.store.corpus import Corpus, entry_repro
from fuzz.program.ir import Program
from fuzz.cli import replay as replay_cli, report as report_cli, triage as triage_cli
from fuzz.findings.replay import CHANGED, ERROR, FIXED, SKIPPED, STILL_FAILING, exit_status, replay, same_bug
from fuzz.judge.runner import run_case
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Outcome, Verdict

from helpers import program

pytest_plugins = ("pytester",)

CORRUPT = "fuzz.planted:corrupt_large"
RELU = [("relu", ["x0"], {})]
PAD = [("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0})]
PAD_RELU = PAD + [("relu", ["v0"], {})]
ADD = [("add", ["x0", "x0"], {})]
CORRUPT_DIR = "0123456789ab"


def record(corpus: Corpus, ops, backend=CORRUPT):
    p = program(ops, marks=["dynamic"], sizes={"s0": [3, 5, 12]}, backend=backend)
    v = run_case(p)
    assert v.is_finding, v.summary()
    path, new = corpus.record(p, v, signature(v, p))
    assert new
    return path


def switch_backend(entry, backend: str) -> None:
    """Edit the entry's program.json and regenerate its repro.py, as if the
    compiler had changed under it."""
    d = json.loads((entry / "program.json").read_text())
    d["settings"]["backend"] = backend
    (entry / "program.json").write_text(json.dumps(d, indent=2))
    (entry / "repro.py").write_text(repro_source(Program.from_dict(d), "edited"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    c = Corpus(root)
    keys = {}
    keys[STILL_FAILING] = record(c, RELU).name
    fixed = record(c, PAD_RELU)
    switch_backend(fixed, "eager")
    keys[FIXED] = fixed.name
    changed = record(c, PAD)
    switch_backend(changed, "fuzz.planted:storage_error_on_pad")
    keys[CHANGED] = changed.name
    bad = root / CORRUPT_DIR
    shutil.copytree(root / keys[STILL_FAILING], bad)
    (bad / "program.json").write_text("{not json")
    keys[ERROR] = bad.name
    crashing = record(c, ADD)  # the harness dies (SIGSEGV) where the recorded bug was a divergence
    switch_backend(crashing, "fuzz.judge.faults:segfault")
    keys["repro-crash"] = crashing.name
    truncated = record(c, ADD + [("relu", ["v0"], {})])  # a stored repro.py cut short: it cannot be filed
    text = (truncated / "repro.py").read_text()
    (truncated / "repro.py").write_text(text[:text.index("def program(") + len("def program(")])  # cut mid-line
    keys["truncated"] = truncated.name
    return root, keys


@pytest.fixture(scope="module")
def rows(corpus):
    root, _ = corpus
    return {r.key: r for r in replay(root, timeout=300, jobs=2)}


def test_each_status(corpus, rows):
    _, keys = corpus
    assert sorted(rows) == sorted(keys.values())
    still = rows[keys[STILL_FAILING]]
    assert still.status == STILL_FAILING and still.repro_rc == 1
    assert still.new_signature == keys[STILL_FAILING] and still.outcome == "divergence"
    fixed = rows[keys[FIXED]]
    assert fixed.status == FIXED and fixed.repro_rc == 0 and fixed.outcome == "ok"  # judged, not just run
    changed = rows[keys[CHANGED]]
    assert changed.status == CHANGED and changed.repro_rc == 1
    assert changed.new_signature != keys[CHANGED] and changed.outcome == "compiled-only-error"
    assert changed.new_signature_text.startswith("compiled-only-error | RuntimeError | setStorage")
    assert changed.signature.startswith("divergence | output | families: pad")
    corrupt = rows[keys[ERROR]]
    assert corrupt.status == ERROR and corrupt.reason.startswith("corrupt entry: program.json: not valid JSON")
    assert corrupt.repro_rc is None  # nothing was run
    crash = rows[keys["repro-crash"]]
    assert crash.status == ERROR and crash.reason.startswith("repro crashed (exit -11)"), crash.reason
    truncated = rows[keys["truncated"]]
    assert truncated.status == ERROR and truncated.reason.startswith("repro.py is truncated or not Python")
    assert truncated.repro_rc is None  # nothing was run
    json.dumps([r.to_dict() for r in rows.values()])  # plain data


def test_exit_status(rows):
    every = list(rows.values())
    good = [r for r in every if r.status in (STILL_FAILING, FIXED)]
    assert exit_status(every) == 1
    assert exit_status(good) == 0
    assert exit_status(good, fail_on_fixed=True) == 1
    assert exit_status([r for r in good if r.status == STILL_FAILING], fail_on_fixed=True) == 0
    assert exit_status([]) == 0
    assert exit_status([r for r in every if r.status == CHANGED]) == 1


def _parser():
    ap = argparse.ArgumentParser(prog="shapefuzz")
    sub = ap.add_subparsers(dest="command", required=True)
    replay_cli.add_parser(sub)
    report_cli.add_parser(sub)
    triage_cli.add_parser(sub)
    return ap


def test_cli_json_table_and_exit_codes(corpus, rows, monkeypatch, capsys):
    import fuzz.findings.replay as replay_mod

    root, keys = corpus
    seen = {}

    def fake_replay(corpus_root, *, timeout, jobs, **kw):
        seen.update(corpus=corpus_root, timeout=timeout, jobs=jobs)
        return list(rows.values())

    monkeypatch.setattr(replay_mod, "replay", fake_replay)
    args = _parser().parse_args(["replay", str(root), "--json", "--timeout", "2m", "-j", "3"])
    assert args.fn(args) == 1
    assert seen == {"corpus": str(root), "timeout": 120.0, "jobs": 3}
    out = json.loads(capsys.readouterr().out)
    assert out["exit_status"] == 1 and out["counts"] == {STILL_FAILING: 1, FIXED: 1, CHANGED: 1, ERROR: 3, SKIPPED: 0}
    assert {r["key"]: r["status"] for r in out["rows"]}[keys[FIXED]] == FIXED

    args = _parser().parse_args(["replay", str(root)])
    assert args.fn(args) == 1
    table = capsys.readouterr().out
    assert keys[CHANGED] in table and "still-failing" in table and "6 entries" in table

    good = [r for r in rows.values() if r.status in (STILL_FAILING, FIXED)]
    monkeypatch.setattr(replay_mod, "replay", lambda *a, **k: good)
    args = _parser().parse_args(["replay", str(root)])
    assert args.fn(args) == 0
    args = _parser().parse_args(["replay", str(root), "--fail-on-fixed"])
    assert args.fn(args) == 1


def test_cli_missing_corpus_is_bad_input(tmp_path, capsys):
    args = _parser().parse_args(["replay", str(tmp_path / "nope"), "--json"])
    assert args.fn(args) == 2
    assert "no corpus directory" in capsys.readouterr().err


def test_a_corpus_with_no_entry_is_bad_input(tmp_path, capsys):
    (tmp_path / "known_issues.json").write_text("[]")
    with pytest.raises(FileNotFoundError, match="holds no corpus entry"):
        replay(tmp_path)
    args = _parser().parse_args(["replay", str(tmp_path)])
    assert args.fn(args) == 2
    assert "holds no corpus entry" in capsys.readouterr().err


def test_an_empty_repro_is_an_error_never_fixed(tmp_path):
    c = Corpus(tmp_path)
    fixed = record(c, PAD_RELU)
    switch_backend(fixed, "eager")  # the program passes now: an empty repro.py must not make that "fixed"
    (fixed / "repro.py").write_text("")
    (row,) = replay(tmp_path)
    assert row.status == ERROR and row.reason == "repro.py is empty" and row.repro_rc is None
    (fixed / "repro.py").write_text('"""a docstring and nothing else"""\n# a comment\n')
    (row,) = replay(tmp_path)
    assert row.status == ERROR and row.reason.startswith("repro.py holds no code")


def test_replay_with_a_relative_path_from_another_directory(tmp_path):
    import os
    import subprocess
    import sys

    c = Corpus(tmp_path / "corpus")
    record(c, RELU)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-m", "fuzz", "replay", "../corpus", "--json"], cwd=elsewhere,
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=root), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout)["counts"][STILL_FAILING] == 1


def test_an_entry_naming_a_custom_backend_is_replayed_only_when_allowed(tmp_path, monkeypatch):
    from fuzz.judge.backends import ALLOW_ENV

    c = Corpus(tmp_path)
    entry = record(c, RELU)
    (tmp_path / "mybackends.py").write_text("from fuzz.planted import corrupt_large  # noqa\n")
    monkeypatch.setenv(ALLOW_ENV, "mybackends")  # the entry's repro.py is made where the backend was allowed
    switch_backend(entry, "mybackends:corrupt_large")
    monkeypatch.setenv(ALLOW_ENV, "")
    (row,) = replay(tmp_path)
    assert row.status == SKIPPED and "--allow-backend mybackends" in row.reason and row.repro_rc is None
    monkeypatch.setenv(ALLOW_ENV, "mybackends")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    (row,) = replay(tmp_path)
    assert row.status == STILL_FAILING, row.reason


def test_timeout_is_an_error(tmp_path):
    c = Corpus(tmp_path)
    entry = record(c, RELU)
    switch_backend(entry, "fuzz.judge.faults:hang")
    (row,) = replay(tmp_path, timeout=1)
    assert row.status == ERROR and row.reason == "timeout: repro.py ran past 1 s" and row.repro_rc is None
    assert row.seconds < 30


def test_known_issue_marked_fixed_that_still_reproduces_is_flagged(tmp_path):
    c = Corpus(tmp_path)
    entry = record(c, RELU)
    (tmp_path / "known_issues.json").write_text(json.dumps([
        {"signature": entry.name, "url": "https://github.com/pytorch/pytorch/issues/1", "status": "fixed"}]))
    (row,) = replay(tmp_path, timeout=300)
    assert row.status == STILL_FAILING
    assert row.known == "https://github.com/pytorch/pytorch/issues/1 (fixed)"
    assert "known issue marked fixed still reproduces" in row.reason


# -- the pytest plugin ----------------------------------------------------------

def test_pytest_plugin_runs_entries_as_strict_xfails(corpus, pytester):
    root, keys = corpus
    # isolated: one entry's program now segfaults, which would take this process down
    result = pytester.runpytest("-p", "fuzz.pytest_plugin", "--shapefuzz-corpus", str(root), "-rA",
                                "-p", "no:cacheprovider", "--shapefuzz-isolate")
    # still-failing and the entry with a truncated repro.py (its program still fails): xfail;
    # fixed, changed and the one that now crashes: fail; the corrupt entry: error
    result.assert_outcomes(xfailed=2, failed=3, errors=1)
    out = result.stdout.str()
    assert f"fixed upstream? (entry {keys[FIXED]}, signature divergence | output | families: pad,pointwise" in out
    assert "it passes now" in out
    assert f"fixed upstream? (entry {keys[CHANGED]}" in out and "another finding: compiled-only-error" in out
    assert "corrupt corpus entry" in out and CORRUPT_DIR in out
    assert f"{keys[STILL_FAILING]}: divergence | output | families: pointwise | device: cpu" in out


def test_pytest_plugin_items_can_be_selected_and_listed(corpus, pytester):
    root, keys = corpus
    result = pytester.runpytest("-p", "fuzz.pytest_plugin", "--shapefuzz-corpus", str(root),
                                "-k", keys[STILL_FAILING], "-p", "no:cacheprovider")
    result.assert_outcomes(xfailed=1)
    listed = pytester.runpytest("-p", "fuzz.pytest_plugin", "--shapefuzz-corpus", str(root), "--co", "-q",
                                "-p", "no:cacheprovider")
    assert all(k in listed.stdout.str() for k in keys.values())


def test_pytest_plugin_without_the_option_adds_nothing(pytester):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "fuzz.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    bad = pytester.runpytest("-p", "fuzz.pytest_plugin", "--shapefuzz-corpus", "/no/such/dir", "-p",
                             "no:cacheprovider")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR


def test_shrunk_entry_with_fewer_op_families_is_still_the_same_bug(tmp_path):
    """The shrinker may drop a whole op family from a value finding; the entry
    keeps its key, and replay must still call it the same bug. A program that
    gained a family it never had is another bucket."""
    c = Corpus(tmp_path)
    d = record(c, PAD_RELU)  # key made from families pad,pointwise

    def judged(ops):
        prog = program(ops, marks=["dynamic"], sizes={"s0": [3, 5, 12]}, backend=CORRUPT)
        (d / "program.json").write_text(json.dumps(prog.to_dict()))
        entry = c.load(d)
        v = run_case(entry.program)
        assert v.is_finding, v.summary()
        return same_bug(entry, v)

    same, note = judged(RELU)
    assert same and "subset of the op families" in note
    assert judged(PAD_RELU) == (True, "")
    assert judged(RELU + [("sum", ["v0"], {"dim": 0, "keepdim": False})])[0] is False


def test_cuda_entry_is_skipped_on_a_machine_without_cuda(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("checks replay where CUDA is missing")
    p = program([("relu", ["x0"], {})])
    p.settings.device = "cuda"
    v = Verdict(outcome=Outcome.DIVERGENCE, where="output 0", message="values mismatch")
    Corpus(tmp_path).record(p, v, signature(v, p))
    rows = replay(tmp_path, timeout=60)
    assert [r.status for r in rows] == [SKIPPED] and "CUDA" in rows[0].reason
    assert exit_status(rows) == 0


def _cuda_corpus(root, n=1):
    """n recorded CUDA entries (their repro.py cannot run on this machine)."""
    for i in range(n):
        p = program([RELU, PAD, ADD][i])  # other op families: other signatures
        p.settings.device = "cuda"
        v = Verdict(outcome=Outcome.DIVERGENCE, where="output 0", message="values mismatch")
        Corpus(root).record(p, v, signature(v, p))
    return root


def _no_cuda():
    import torch

    if torch.cuda.is_available():
        pytest.skip("checks a machine without CUDA")


def test_repro_without_its_device_exits_77_and_replay_counts_it_skipped(tmp_path):
    import subprocess
    import sys

    _no_cuda()
    (entry,) = [d for d in _cuda_corpus(tmp_path).iterdir() if d.is_dir()]
    e = Corpus(tmp_path).load(entry)  # its harness (not stored: generated, as replay does)
    (tmp_path / "harness.py").write_text(entry_repro(e.program, e.signature)[0])
    r = subprocess.run([sys.executable, "harness.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 77 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("SKIP: ") and "no CUDA device" in r.stderr
    # another Python (--python) is not asked about CUDA up front: the repro's 77 decides
    (row,) = replay(tmp_path, timeout=300, python=sys.executable)
    assert row.status == SKIPPED and row.repro_rc == 77 and "SKIP: " in row.reason and exit_status([row]) == 0


def test_replay_reports_each_entry_as_it_finishes(tmp_path):
    import os
    import subprocess
    import sys

    _no_cuda()
    _cuda_corpus(tmp_path, n=2)
    seen = []
    rows = replay(tmp_path, jobs=2, on_row=lambda row, done, total: seen.append((row.key, done, total)))
    assert sorted(k for k, _, _ in seen) == sorted(r.key for r in rows) and [d for _, d, _ in seen] == [1, 2]
    assert {t for _, _, t in seen} == {2}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    plain = subprocess.run([sys.executable, "-m", "fuzz", "replay", str(tmp_path)], capture_output=True, text=True,
                           env=env, timeout=300)
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0].startswith("[1/2] ") and lines[1].startswith("[2/2] ") and "skipped" in lines[0]
    assert "2 entries: " in plain.stdout  # the table at the end
    js = subprocess.run([sys.executable, "-m", "fuzz", "replay", str(tmp_path), "--json"], capture_output=True,
                        text=True, env=env, timeout=300)
    assert json.loads(js.stdout)["counts"][SKIPPED] == 2  # stdout: only the JSON summary
    assert [ln[:6] for ln in js.stderr.splitlines()] == ["[1/2] ", "[2/2] "]


def test_pytest_plugin_collects_only_the_corpus(tmp_path, pytester):
    """Not the ini's testpaths (shapefuzz's own suite), nor the current directory."""
    _no_cuda()
    corpus = _cuda_corpus(tmp_path / "corpus")
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    pytester.makepyfile(**{"tests/test_suite": "def test_suite():\n    assert False\n",
                           "test_here": "def test_here():\n    assert False\n"})
    result = pytester.runpytest("-p", "fuzz.pytest_plugin", "--shapefuzz-corpus", str(corpus), "-rs",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)  # the CUDA entry, with why
    assert "no CUDA device" in result.stdout.str()
    named = pytester.runpytest("-p", "fuzz.pytest_plugin", "--shapefuzz-corpus", str(corpus), "test_here.py",
                               "-p", "no:cacheprovider")
    named.assert_outcomes(skipped=1, failed=1)  # a test file named on the command line still runs


def test_one_entry_directory_replays_just_that_entry(corpus, rows):
    root, keys = corpus
    (row,) = replay(root / keys[STILL_FAILING], timeout=300)
    assert row.key == keys[STILL_FAILING] and row.status == rows[keys[STILL_FAILING]].status == STILL_FAILING
