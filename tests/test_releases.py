""""Newest" is the newest torch release on the package index, not the newest a machine-wide pip constraint
allows (fuzz/releases.py), and a release is installed exactly (fuzz/findings/status/versions.py ensure_env). Tested
against a local index of two fake releases, 2.15.0 and 2.16.0, with a constraint that caps torch at 2.15.0."""

import base64
import hashlib
import json
import os
import zipfile

import pytest

from fuzz import releases


def _wheel(version: str, where) -> None:
    """A wheel named torch that is only its version: enough for pip to resolve and install."""
    dist = f"torch-{version}.dist-info"
    files = {"torch/__init__.py": f"__version__ = {version!r}\n",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: shapefuzz-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(v)}" for k, v in files.items()]
    files[f"{dist}/RECORD"] = "\n".join(record + [f"{dist}/RECORD,,"]) + "\n"
    with zipfile.ZipFile(where / f"torch-{version}-py3-none-any.whl", "w") as z:
        for k, v in files.items():
            z.writestr(k, v)


@pytest.fixture
def index(tmp_path, monkeypatch):
    """pip configured as a capped machine is: a local index of torch 2.15.0 and 2.16.0, torch<=2.15.0."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for v in ("2.15.0", "2.16.0"):
        _wheel(v, wheels)
    (tmp_path / "cap.txt").write_text("torch<=2.15.0\n")
    (tmp_path / "pip.conf").write_text(f"[global]\nno-index = true\nfind-links = {wheels}\n"
                                       f"constraint = {tmp_path / 'cap.txt'}\n")
    for k in list(os.environ):
        if k.startswith("PIP_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    monkeypatch.delenv("SHAPEFUZZ_TORCH_INDEX", raising=False)
    monkeypatch.setenv("SHAPEFUZZ_NEWEST_TORCH", "")
    monkeypatch.setenv("SHAPEFUZZ_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_newest_is_the_index_s_whatever_the_constraint_allows(index):
    assert releases.allowed() == "2.15.0"
    assert releases.newest() == "2.16.0"
    note = releases.constraint_note("2.16.0")
    assert note and "caps torch at 2.15.0" in note and "2.16.0" in note
    assert releases.constraint_note("2.15.0") is None
    # remembered, so that a listing offline later still knows it
    assert releases.recorded() == "2.16.0" and releases.known_newest() == "2.16.0"


def test_a_release_is_installed_exactly_despite_the_cap(index, monkeypatch):
    from fuzz.findings.status import versions

    monkeypatch.setenv("SHAPEFUZZ_VENV_CACHE", str(index / "venvs"))
    monkeypatch.setattr(versions, "_is_this_torch", lambda release: False)
    env = versions.ensure_env("2.16.0")
    assert env.torch == "2.16.0" and env.python.startswith(str(index / "venvs"))


def test_versions_says_once_where_the_machine_would_hold_torch_back(index):
    from fuzz.findings.status.versions import resolve_releases

    heard = []
    assert resolve_releases(["2.15.0", "newest", "newest"], log=heard.append) == ["2.15.0", "2.16.0"]
    assert len(heard) == 1 and "2.16.0" in heard[0] and "caps torch at 2.15.0" in heard[0]


def test_the_release_this_interpreter_has_runs_here_without_a_venv(tmp_path, monkeypatch):
    import sys

    import torch

    from fuzz.findings.status import versions

    monkeypatch.setenv("SHAPEFUZZ_VENV_CACHE", str(tmp_path / "venvs"))
    here = torch.__version__.split("+")[0]
    env = versions.ensure_env(here)
    assert env.python == sys.executable and not (tmp_path / "venvs").exists()
    assert versions._is_this_torch(".".join(here.split(".")[:2])) and not versions._is_this_torch("1.0.0")


def test_offline_the_record_answers_and_a_hostile_one_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("SHAPEFUZZ_CACHE", str(tmp_path))
    monkeypatch.setenv("SHAPEFUZZ_NEWEST_TORCH", "")
    monkeypatch.setattr(releases, "_resolve", lambda **kw: (_ for _ in ()).throw(releases.ReleaseError("offline")))
    assert releases.newest_or_recorded() == (None, "offline")
    (tmp_path / "newest-torch.json").write_text(json.dumps({"newest": "2.15.0", "asked": 0}))
    assert releases.newest_or_recorded() == ("2.15.0", "the package index, when it was last reachable")
    for bad in ({"newest": "2.15.0\n; rm -rf /", "asked": 0}, {"newest": 2.15, "asked": 0}, [1], "x" * 5000):
        (tmp_path / "newest-torch.json").write_text(json.dumps(bad))
        assert releases.recorded() is None


def test_the_stated_newest_release_is_checked(monkeypatch):
    monkeypatch.setenv("SHAPEFUZZ_NEWEST_TORCH", "2.15.0")
    assert releases.newest() == "2.15.0" and releases.newest_or_recorded()[0] == "2.15.0"
    monkeypatch.setenv("SHAPEFUZZ_NEWEST_TORCH", "offline")
    with pytest.raises(releases.ReleaseError):
        releases.newest()
    assert releases.known_newest() is None
    monkeypatch.setenv("SHAPEFUZZ_NEWEST_TORCH", "latest please")
    with pytest.raises(releases.ReleaseError, match="not a torch release"):
        releases.newest()


def test_a_run_of_the_new_release_adds_to_the_range_rather_than_replacing_it():
    from fuzz.findings.status.versions import AFFECTED, PASSES, merge_records, summarize

    old = {**summarize({"2.13.0": {"result": AFFECTED}, "2.14.1": {"result": AFFECTED}}, False),
           "cpu": {"reproduces": True, **summarize({"2.14.1": {"result": AFFECTED}}, False)}}
    new = {**summarize({"2.15.0": {"result": PASSES}}, False),
           "cpu": {"reproduces": True, **summarize({"2.15.0": {"result": AFFECTED}}, False)}}
    got = merge_records(old, new)
    assert got["affected"] == ["2.13.0", "2.14.1"] and got["first_fixed"] == "2.15.0"
    assert got["cpu"]["affected"] == ["2.14.1", "2.15.0"] and got["cpu"]["first_fixed"] is None
    # a release run again replaces its result; a malformed old record is dropped, not trusted
    assert merge_records(got, summarize({"2.14.1": {"result": PASSES}}, False))["first_fixed"] == "2.14.1"
    for bad in (None, [], {"releases": [1]}, {"releases": {"2.13.0": "affected"}}):
        assert merge_records(bad, new)["releases"] == {"2.15.0": {"result": PASSES}}


@pytest.mark.campaign  # two CLI runs and a venv: a minute or two on 2 CPUs
def test_moving_a_corpus_to_the_index_s_new_release_keeps_its_range(index, monkeypatch, tmp_path):
    """The README's commands for a new release, against the local index: `versions CORPUS --torch newest`
    resolves 2.16.0 (the cap says 2.15.0), installs it exactly, runs each entry's short repro there (the fake
    release cannot run it: an error, not a pass) and adds the result to the entry's range; `bugs` then says
    the entry was last checked on an older release."""
    import subprocess
    import sys

    from fuzz.findings.report.bugs import UNCHECKED
    from fuzz.findings.store.corpus import Corpus
    from fuzz.findings.signature import minimal_signature
    from fuzz.findings.status.versions import AFFECTED, summarize
    from fuzz.judge.runner import run_case

    from helpers import program

    corpus = Corpus(tmp_path / "corpus")
    p = program([("relu", ["x0"], {})], marks=["dynamic"], backend="fuzz.planted:corrupt_large")
    v = run_case(p)
    entry, _ = corpus.record(p, v, minimal_signature(v, p))
    corpus.set_meta(entry, "versions", summarize({"2.14.1": {"result": AFFECTED}}, False))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root, SHAPEFUZZ_VENV_CACHE=str(tmp_path / "venvs"))
    r = subprocess.run([sys.executable, "-m", "fuzz", "versions", str(tmp_path / "corpus"), "--torch", "newest",
                        "--allow-backend", "fuzz.planted"], capture_output=True, text=True, env=env, timeout=600)
    assert "caps torch at 2.15.0" in r.stderr and r.stderr.count("caps torch") == 1, r.stderr
    rec = json.loads((entry / "meta.json").read_text())["versions"]
    assert rec["releases"]["2.16.0"]["torch"] == "2.16.0" and rec["releases"]["2.16.0"]["result"] == "error"
    assert rec["affected"] == ["2.14.1"]  # the older result stays in the range
    env["SHAPEFUZZ_NEWEST_TORCH"] = "2.16.0"
    r = subprocess.run([sys.executable, "-m", "fuzz", "bugs", str(tmp_path / "corpus"), "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    (row,) = json.loads(r.stdout)
    assert row["status"] == UNCHECKED and row["checked_on"].endswith("2.16.0 is out"), row


def test_a_cpu_twin_that_passes_on_the_new_release_is_fixed_there_not_forgotten():
    """A CUDA entry's CPU twin failed on 2.13 and 2.14.1 and passes on 2.15.0: its range says first fixed in
    2.15.0. A twin that never failed anywhere stays "does not fail"."""
    from fuzz.findings.report.bugs import versions_text
    from fuzz.findings.status.versions import AFFECTED, PASSES, merge_records, summarize

    old = {**summarize({"2.11.0": {"result": "not run"}}, True),
           "cpu": {"reproduces": True, **summarize({"2.13.0": {"result": AFFECTED},
                                                    "2.14.1": {"result": AFFECTED}}, False)}}
    now = {**summarize({"2.11.0": {"result": "not run"}}, True),
           "cpu": {"reproduces": False, "shown": "exit 0", "releases": {"2.15.0": {"result": PASSES}}}}
    got = merge_records(old, now)
    assert got["cpu"]["reproduces"] and got["cpu"]["first_fixed"] == "2.15.0", got
    assert "its CPU twin: affected 2.13.0, 2.14.1; first fixed in 2.15.0" in versions_text(got)
    never = merge_records(None, now)
    assert not never["cpu"]["reproduces"] and "its CPU twin does not fail" in versions_text(never)
    from fuzz.findings.status.versions import newest_checked

    assert newest_checked(never) is None and newest_checked(got) == ("2.15.0", PASSES)


@pytest.mark.parametrize("stdout, stderr", [("", "ERROR: No matching distribution found for torch"),
                                            ("null", "ERROR: Could not find a version that satisfies the requirement"),
                                            ('{"install": "x"}', "")])
def test_a_pip_that_cannot_resolve_says_why_in_its_own_words(monkeypatch, stdout, stderr):
    """No index reachable (a GPU box offline): pip exits 1 with no JSON report; the reason is pip's last
    error line, not the name of a Python exception."""
    import subprocess

    monkeypatch.delenv("SHAPEFUZZ_NEWEST_TORCH", raising=False)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, stdout, stderr))
    with pytest.raises(releases.ReleaseError) as e:
        releases.allowed()
    assert str(e.value).endswith(f"({stderr or 'no answer'})") and "Error)" not in str(e.value)
