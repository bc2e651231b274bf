"""The bug list (`shapefuzz bugs`), version ranging (`shapefuzz versions`)
and the report's stamp: what a user reads after a night's run."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.findings.report.bugs import FIXED, FIXED_NEWER, KNOWN, NEW, PENDING, UNCHECKED, bug_rows, markdown
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.replay import replay
from fuzz.findings.signature import minimal_signature, signature
from fuzz.findings.status.versions import AFFECTED, ERROR, PASSES, summarize
from fuzz.judge.runner import run_case

from helpers import program

ROOT = Path(__file__).resolve().parent.parent


def _record(corpus, ops, backend="fuzz.planted:corrupt_large", shrunk=True):
    p = program(ops, marks=["dynamic"], backend=backend)
    v = run_case(p)
    assert v.is_finding
    return corpus.record(p, v, (minimal_signature if shrunk else signature)(v, p))[0]


def test_bugs_lists_every_entry_with_its_status(tmp_path):
    corpus = Corpus(tmp_path)
    relu = _record(corpus, [("relu", ["x0"], {})])
    pad = _record(corpus, [("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0})])
    add = _record(corpus, [("add", ["x0", "x0"], {})])
    (tmp_path / "known_issues.json").write_text(json.dumps(
        [{"ops": ["pad"], "outcome": "divergence", "url": "https://example.org/pad-bug"}]))
    corpus.set_meta(add, "upstream", {"checked": "2026-11-26", "found": False})
    rows = {r.key: r for r in bug_rows(tmp_path)}
    assert set(rows) == {relu.name, pad.name, add.name}
    assert rows[pad.name].status == KNOWN and "https://example.org/pad-bug" in rows[pad.name].upstream
    # found and never rerun: nothing says it still fails on a newer torch (a fresh campaign's corpus)
    assert rows[relu.name].status == UNCHECKED and rows[relu.name].upstream == "not searched upstream yet"
    import torch

    for e in (relu, add):  # `shapefuzz versions` ran it on the torch that found it, the newest known here
        corpus.set_meta(e, "versions", summarize({torch.__version__.split("+")[0]: {"result": AFFECTED}}, False))
    rows = {r.key: r for r in bug_rows(tmp_path)}
    assert rows[relu.name].status == NEW
    assert rows[add.name].upstream == "not found upstream (2026-11-26)"
    assert rows[relu.name].repro_lines and rows[relu.name].repro_lines <= 40 and rows[relu.name].device == "cpu"
    # fixed at the last replay: the program passes now
    d = json.loads((relu / "program.json").read_text())
    d["settings"]["backend"] = "eager"
    (relu / "program.json").write_text(json.dumps(d))
    replay(relu, timeout=300)
    rows = {r.key: r for r in bug_rows(tmp_path)}
    assert rows[relu.name].status == FIXED
    text = markdown(list(rows.values()), tmp_path)
    assert all(k in text for k in rows) and "3 distinct bugs: 1 new, 1 known upstream, 1 fixed." in text
    # an entry not shrunk yet is no row of a new bug: its program is not the bug's yet
    unshrunk = _record(corpus, [("cumsum", ["x0"], {"dim": 0})], shrunk=False)
    rows = bug_rows(tmp_path)
    assert {r.key: r for r in rows}[unshrunk.name].status == PENDING
    text = markdown(rows, tmp_path)
    assert f"| `{unshrunk.name}` |" not in text and "not shrunk yet" in text and unshrunk.name in text


def test_the_newest_torch_decides_new(tmp_path):
    """Found on an older torch, a bug is new only once it fails on the newest release the corpus knows;
    one that passes there is fixed (<= that release), listed apart."""
    corpus = Corpus(tmp_path)
    a = _record(corpus, [("relu", ["x0"], {})])
    b = _record(corpus, [("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0})])
    c = _record(corpus, [("cumsum", ["x0"], {"dim": 0})])
    for d in (a, b, c):
        env = json.loads((d / "env.json").read_text())
        (d / "env.json").write_text(json.dumps(dict(env, torch="2.11.0+cu130")))
    corpus.set_meta(a, "versions", summarize({"2.13.0": {"result": AFFECTED}, "2.14.1": {"result": AFFECTED}}, False))
    # b: a CUDA-style record whose CPU twin passes on the newest
    corpus.set_meta(b, "versions", {**summarize({"2.11.0": {"result": AFFECTED}}, True),
                                    "cpu": {"reproduces": True, **summarize(
                                        {"2.13.0": {"result": AFFECTED}, "2.14.1": {"result": PASSES}}, False)}})
    rows = {r.key: r for r in bug_rows(tmp_path)}
    assert rows[a.name].status == NEW and rows[a.name].checked_on == "2.14.1: affected"
    assert rows[b.name].status == FIXED_NEWER and "fixed in 2.14.1 (affected 2.13.0)" in rows[b.name].upstream
    assert rows[b.name].checked_on == "2.14.1: passes (CPU twin)"
    assert rows[c.name].status == UNCHECKED and rows[c.name].checked_on.startswith("2.11.0")


def test_the_package_index_s_newest_release_decides_new(tmp_path):
    """"Newest" is the index's newest release, not the newest the corpus ran on: a row checked only on an
    older one says so and is never new; a finding made on the newest release is checked there by being
    found; a CUDA finding whose CPU twin does not fail waits for a current CUDA torch."""
    corpus = Corpus(tmp_path)
    found = _record(corpus, [("relu", ["x0"], {})])
    older = _record(corpus, [("pad", ["x0"], {"mode": "constant", "pad": [1, 2], "value": 0.0})])
    gpu = _record(corpus, [("cumsum", ["x0"], {"dim": 0})])
    for d, torch_version in ((found, "2.15.0+cu132"), (older, "2.13.0+cpu"), (gpu, "2.11.0+cu130")):
        env = json.loads((d / "env.json").read_text())
        (d / "env.json").write_text(json.dumps(dict(env, torch=torch_version)))
    corpus.set_meta(older, "versions", summarize({"2.13.0": {"result": AFFECTED}, "2.14.1": {"result": AFFECTED}},
                                                 False))
    prog = json.loads((gpu / "program.json").read_text())
    prog["settings"]["device"] = "cuda"
    (gpu / "program.json").write_text(json.dumps(prog))
    corpus.set_meta(gpu, "versions", {**summarize({"2.11.0": {"result": "not run"}}, True),
                                      "cpu": {"reproduces": False, "shown": "exit 0"}})
    rows = {r.key: r for r in bug_rows(tmp_path, index="2.15.0")}
    assert rows[found.name].status == NEW and rows[found.name].checked_on == "2.15.0: affected (found)"
    assert rows[older.name].status == UNCHECKED
    assert rows[older.name].checked_on == "2.14.1: affected; 2.15.0 is out"
    assert rows[gpu.name].status == UNCHECKED
    assert rows[gpu.name].checked_on == "2.11.0: affected (found); 2.15.0 is out: waits for a check on a CUDA torch 2.15.0"
    # the index unknown (offline, nothing recorded): the corpus's newest decides, and a finding never rerun
    # is not called new
    rows = {r.key: r for r in bug_rows(tmp_path)}
    assert rows[found.name].status == UNCHECKED and rows[older.name].checked_on == "2.14.1: affected; 2.15.0 is out"


def test_bugs_cli_writes_bugs_md_and_refuses_an_empty_dir(tmp_path):
    corpus = Corpus(tmp_path / "c")
    _record(corpus, [("relu", ["x0"], {})])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "fuzz", "bugs", str(tmp_path / "c"), "--write", "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == 1 and (tmp_path / "c" / "BUGS.md").is_file()
    (tmp_path / "empty").mkdir()
    r = subprocess.run([sys.executable, "-m", "fuzz", "bugs", str(tmp_path / "empty")], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "holds no corpus entry" in r.stderr


def test_an_untriaged_bug_says_so_and_report_no_triage_says_how_to_triage_it(tmp_path, capsys):
    """A campaign defers each entry's triage until its report (fuzz/findings/deferred_triage.py): BUGS.md
    names the rows not triaged yet, and `report --no-triage` says its report has no ablation and how to
    make one; an ablation of the entry's program as it is now ends both."""
    import argparse

    from fuzz.cli.report import add_parser
    from fuzz.findings.triage import ablation_document, write_ablation

    corpus = Corpus(tmp_path)
    relu = _record(corpus, [("relu", ["x0"], {})])
    (row,) = bug_rows(tmp_path)
    assert row.untriaged and "not triaged yet" in markdown([row], tmp_path) and relu.name in markdown([row], tmp_path)
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers(dest="command"))
    args = ap.parse_args(["report", str(relu), "--no-triage"])
    assert args.fn(args) == 0
    err = capsys.readouterr().err
    assert "no ablation" in err and f"shapefuzz triage {relu}" in err
    entry = corpus.load(relu)
    write_ablation(relu, ablation_document([], entry.program, entry.key, entry.signature.text))
    (row,) = bug_rows(tmp_path)
    assert not row.untriaged and "not triaged" not in markdown([row], tmp_path)
    assert args.fn(args) == 0 and "no ablation" not in capsys.readouterr().err
    d = json.loads((relu / "program.json").read_text())
    d["seed"] = 1  # a merge made another program the entry's: its ablation is of the earlier one
    (relu / "program.json").write_text(json.dumps(d))
    (row,) = bug_rows(tmp_path)
    assert "earlier program" in row.untriaged


def test_bugs_triage_triages_the_untriaged_rows_first(tmp_path, monkeypatch, capsys):
    import argparse

    from fuzz.cli.bugs import add_parser
    from fuzz.findings import deferred_triage
    from fuzz.findings.triage import ablation_document, write_ablation

    corpus = Corpus(tmp_path)
    relu = _record(corpus, [("relu", ["x0"], {})])
    asked = []

    def triage(entry_dir, **_):  # as triage_if_needed, without compiling its rows
        asked.append(Path(entry_dir).name)
        e = corpus.load(entry_dir)
        write_ablation(entry_dir, ablation_document([], e.program, e.key, e.signature.text))
    monkeypatch.setattr(deferred_triage, "triage_if_needed", triage)
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers(dest="command"))
    args = ap.parse_args(["bugs", str(tmp_path), "--write"])
    assert args.fn(args) == 0 and asked == [] and "not triaged yet" in (tmp_path / "BUGS.md").read_text()
    assert "not triaged yet" in capsys.readouterr().out
    args = ap.parse_args(["bugs", str(tmp_path), "--write", "--triage"])
    assert args.fn(args) == 0 and asked == [relu.name]
    assert "not triaged" not in (tmp_path / "BUGS.md").read_text() and "not triaged" not in capsys.readouterr().out


def test_the_version_record_names_the_first_fixed_release():
    rec = summarize({"2.6": {"result": AFFECTED}, "2.10": {"result": PASSES}, "2.7": {"result": AFFECTED},
                     "2.8": {"result": ERROR}, "2.9": {"result": PASSES}}, partial=False)
    assert list(rec["releases"]) == ["2.6", "2.7", "2.8", "2.9", "2.10"]  # by release, not by text
    assert rec["affected"] == ["2.6", "2.7"] and rec["first_fixed"] == "2.9" and rec["not_affected"] == ["2.9", "2.10"]
    rec = summarize({"2.6": {"result": PASSES}, "2.7": {"result": AFFECTED}}, partial=True)
    assert rec["first_fixed"] is None and rec["partial"]


def test_a_report_names_its_program_and_replay_flags_a_stale_one(tmp_path):
    from fuzz.findings.store.scripts import program_digest
    from fuzz.findings.store.scripts import stamped_program
    from fuzz.kinds import report_entry

    corpus = Corpus(tmp_path)
    entry = _record(corpus, [("relu", ["x0"], {})])
    text = report_entry(entry)
    assert stamped_program(text) == program_digest(corpus.load(entry).program)
    assert "#### Searching for duplicates" in text
    (row,) = replay(tmp_path, timeout=300)
    assert "report.md describes another program" not in row.reason
    d = json.loads((entry / "program.json").read_text())
    d["seed"] = 1  # another program, the report left as it was
    (entry / "program.json").write_text(json.dumps(d))
    (row,) = replay(tmp_path, timeout=300)
    assert "report.md describes another program" in row.reason


@pytest.mark.campaign
def test_version_ranging_over_two_releases(tmp_path):
    """A real bug (corpus/d649e53c6196, aot_eager on CPU) under two torch releases: 2.13.0 in a cached
    virtualenv (made on first use from this machine's disk), and the release installed here, which runs in
    this interpreter (no second copy of a torch of several GB to install)."""
    import torch

    here = torch.__version__.split("+")[0]
    other = "2.13.0" if here != "2.13.0" else "2.14.1"
    shutil.copytree(ROOT / "corpus" / "d649e53c6196", tmp_path / "d649e53c6196")
    meta = tmp_path / "d649e53c6196" / "meta.json"
    d = json.loads(meta.read_text())
    d.pop("versions", None)  # the shipped record's runs would be merged with these
    meta.write_text(json.dumps(d))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "fuzz", "versions", str(tmp_path / "d649e53c6196"), "--torch",
                        other, here], capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads((tmp_path / "d649e53c6196" / "meta.json").read_text())["versions"]
    assert set(rec["releases"]) == {other, here}
    assert all(x["result"] in (AFFECTED, PASSES) for x in rec["releases"].values()), rec
    assert rec["releases"][other]["torch"].startswith(other)
    assert rec["releases"][here]["torch"].startswith(here)
    assert "2.13.0" in rec["affected"]  # the torch it was found and checked with


def test_a_cuda_entry_whose_cpu_twin_fails_gets_a_cpu_repro_and_its_range(tmp_path):
    """`shapefuzz versions` found the CUDA program's CPU twin failing as found: the short repro is the CPU
    one (any maintainer runs it), and the report's range is the twin's. A twin that passed decides too,
    over an older triage row that said CPU reproduced."""
    from fuzz.findings.report.parts import affected_text
    from fuzz.findings.store.scripts import entry_repro_device, entry_scripts
    from fuzz.judge.verdict import Outcome, Stage, Verdict

    corpus = Corpus(tmp_path)
    p = program([("relu", ["x0"], {})], marks=["dynamic"], backend="inductor")
    p.settings.device = "cuda"
    v = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, where="output 0", call=0, sizes={"s0": 3},
                message="values mismatch")
    d = corpus.record(p, v, minimal_signature(v, p))[0]
    assert entry_repro_device(d, p) is None
    (d / "ablation.json").write_text(json.dumps({"rows": [{"axis": "device", "changes": {"device": "cpu"},
                                                          "status": "reproduces"}]}))
    assert entry_repro_device(d, p) == "cpu"
    twin = {"reproduces": True, **summarize({"2.13.0": {"result": AFFECTED, "torch": "2.13.0+cpu"},
                                              "2.14.1": {"result": AFFECTED, "torch": "2.14.1"}}, False)}
    corpus.set_meta(d, "versions", {**summarize({"2.13.0": {"result": "not run", "torch": "2.13.0+cpu"}}, True),
                                    "cpu": twin})
    assert entry_repro_device(d, p) == "cpu"
    scripts, _ = entry_scripts(p, v, minimal_signature(v, p), "cpu")
    assert "cuda" not in scripts["repro.py"].split('"""')[2]  # the code, past the docstring naming the key
    text = affected_text(corpus.load(d))
    assert "`2.14.1` (the program on CPU) | affected" in text and "not run" not in text and "Partial" not in text
    corpus.set_meta(d, "versions", {"cpu": {"reproduces": False}})  # measured on a newer torch: it decides
    assert entry_repro_device(d, p) is None


def test_a_stride_mismatch_on_an_unbacked_dim_is_the_tracked_class_not_a_new_bug(tmp_path):
    """An output stride mismatch where the output has a mark_unbacked dim is the unbacked-strides class
    (Inductor gives up exact strides there on purpose), even from a verdict judged before that rule;
    the same mismatch on a static dim stays a bug of its own."""
    from fuzz.findings.report.bugs import TRACKED
    from fuzz.judge.verdict import Outcome, Stage, Verdict

    import torch

    corpus = Corpus(tmp_path)
    made = {}
    for marks, op in ((["unbacked", "static"], ("sin", ["x0"], {})),
                      (["static", "static"], ("cumsum", ["x0"], {"dim": 0}))):
        p = program([op], shape=("s0", "s1"), sizes={"s0": [2], "s1": [2]}, marks=marks,
                    backend="inductor")
        v = Verdict(outcome=Outcome.STRIDE, stage=Stage.COMPARE, call=0, sizes={"s0": 2, "s1": 2},
                    where="output 0", message="strides (2, 1) vs eager (1, 2)")
        d = corpus.record(p, v, minimal_signature(v, p))[0]
        corpus.set_meta(d, "versions", summarize({torch.__version__.split("+")[0]: {"result": AFFECTED}}, False))
        made[marks[0]] = d.name
    rows = {r.key: r for r in bug_rows(tmp_path)}
    assert rows[made["unbacked"]].status == TRACKED
    assert rows[made["static"]].status == NEW
    assert "1 tracked class (by design)" in markdown(list(rows.values()), tmp_path)
