"""The corpus is data: an entry stores no full harness, every command that needs
one generates it from the validated program, and no command runs a script an
entry stores (a corpus must be safe to share). Older entries are migrated."""

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from fuzz.findings.store.corpus import Corpus
from fuzz.findings.store.repro_files import check_repro
from fuzz.findings.store.scripts import _digest, entry_repro, entry_repro_device, settled_scripts
from fuzz.findings.signature import minimal_signature, signature
from fuzz.judge.backends import ALLOW_ENV
from fuzz.judge.verdict import Outcome, Verdict

from helpers import program, run_cli

ROOT = Path(__file__).resolve().parent.parent
RELU = [("relu", ["x0"], {})]
FAIL_LINE = "FAIL: compiled and eager disagree"  # the harness prints it; no short form or note does


def loop_entry(root):
    """A minimal entry of a finding without a short form (a hang needs the judging loop's time limit)."""
    p = program(RELU, marks=["dynamic"], sizes={"s0": [3, 5, 7]})
    v = Verdict(outcome=Outcome.HANG, call=2, sizes={"s0": 7}, where="call 2")
    c = Corpus(root)
    path, _ = c.record(p, v, signature(v, p), env={"torch": "test"})
    return c, c.rekey(path, minimal_signature(v, p))


def short_entry(root, settled=False):
    """An entry of a compiled-only error, which has a short repro (settled: re-keyed,
    its short form checked, as dedupe leaves it)."""
    p = program(RELU, marks=["dynamic"], sizes={"s0": [3, 5]})
    v = Verdict(outcome=Outcome.COMPILED_ERROR, call=1, sizes={"s0": 5}, exc_type="RuntimeError", message="boom")
    c = Corpus(root)
    path, _ = c.record(p, v, signature(v, p), env={"torch": "test"})
    if settled:
        path = c.rekey(path, minimal_signature(v, p))
        meta = json.loads((path / "meta.json").read_text())
        meta["short_repro"].update(checked="2026-01-01T00:00:00+00:00", reproduces=True)
        (path / "meta.json").write_text(json.dumps(meta))
    return c, path


def old_layout(path, repro_is_harness: bool):
    """The entry as older shapefuzz stored it: harness.py beside repro.py (and, for a
    finding without a short form, repro.py a copy of it)."""
    e = Corpus(path.parent).load(path)
    harness, _ = entry_repro(e.program, e.signature)
    (path / "harness.py").write_text(harness)
    if repro_is_harness:
        (path / "repro.py").write_text(harness)
    return harness


# -- what an entry holds -----------------------------------------------------------------------

def test_an_entry_without_a_short_form_holds_a_note_not_the_harness(tmp_path):
    _, path = loop_entry(tmp_path)
    assert not (path / "harness.py").exists()
    note = (path / "repro.py").read_text()
    assert "No short repro: a hang finding needs the judging loop." in note
    assert "shapefuzz repro ENTRY --harness -o harness.py" in note
    assert FAIL_LINE not in note and len(note.splitlines()) < 15
    compile(note, "repro.py", "exec")  # still a whole script (replay checks that)
    meta = json.loads((path / "meta.json").read_text())
    assert "needs the judging loop" in meta["short_repro"]["full_harness"]


def test_a_report_without_a_short_form_does_not_inline_the_harness(tmp_path):
    from fuzz.kinds import render_report

    _, path = loop_entry(tmp_path)
    old_layout(path, repro_is_harness=True)  # not migrated yet: the report still never inlines the harness
    text = render_report(Corpus(tmp_path).load(path))
    assert FAIL_LINE not in text and "def program(" not in text
    assert "shapefuzz repro ENTRY --harness" in text and "too long to inline" in text


# -- repro ENTRY --harness --------------------------------------------------------------------

def test_repro_harness_prints_or_writes_the_generated_harness(tmp_path, capsys):
    _, path = loop_entry(tmp_path / "corpus")
    e = Corpus(path.parent).load(path)
    want, _ = entry_repro(e.program, e.signature)
    rc, out, _ = run_cli(["repro", path, "--harness"], capsys)
    assert rc == 0 and out == want and FAIL_LINE in out
    rc, out, _ = run_cli(["repro", path, "--harness", "-o", tmp_path / "h.py"], capsys)
    assert rc == 0 and out == "" and (tmp_path / "h.py").read_text() == want
    assert not (path / "harness.py").exists()  # nothing written into the entry


def test_repro_harness_refuses_a_corpus_a_broken_entry_and_an_unallowed_backend(tmp_path, capsys, monkeypatch):
    _, path = loop_entry(tmp_path / "corpus")
    rc, _, err = run_cli(["repro", tmp_path / "corpus", "--harness"], capsys)
    assert rc == 2 and "--harness takes one entry" in err and len(err.strip().splitlines()) == 1
    d = json.loads((path / "program.json").read_text())
    d["settings"]["backend"] = "evil_module:backend"
    (path / "program.json").write_text(json.dumps(d))
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    rc, out, err = run_cli(["repro", path, "--harness"], capsys)
    assert rc == 2 and "--allow-backend evil_module" in err and out == ""
    (path / "program.json").write_text("{not json")
    rc, _, err = run_cli(["repro", path, "--harness"], capsys)
    assert rc == 2 and "program.json" in err and len(err.strip().splitlines()) == 1


# -- no command runs a stored script -----------------------------------------------------------

def plant(path, sentinel) -> str:
    """A payload in every script the entry stores; returns it."""
    payload = f"open({str(sentinel)!r}, 'w').write('ran')\n"
    for name in ("repro.py", "harness.py"):
        (path / name).write_text(payload)
    return payload


def fake_sanitizer(bin_dir: Path, log: Path):
    """A compute-sanitizer that records what it was asked to run (and the script's text), runs nothing."""
    bin_dir.mkdir()
    exe = bin_dir / "compute-sanitizer"
    exe.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}.args\ncat \"$(pwd)/${{6}}\" > {log}.script\n"
                   "echo '========= COMPUTE-SANITIZER'\necho '========= ERROR SUMMARY: 0 errors'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)


def test_sanitize_runs_the_generated_harness_never_the_stored_scripts(tmp_path, capsys, monkeypatch):
    _, path = loop_entry(tmp_path / "corpus")
    sentinel, log = tmp_path / "SENTINEL", tmp_path / "sanitizer"
    payload = plant(path, sentinel)
    fake_sanitizer(tmp_path / "bin", log)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    rc, out, err = run_cli(["sanitize", path], capsys)
    assert rc == 0, err
    args = (log.parent / "sanitizer.args").read_text().split()
    assert args[:4] == ["--tool", "memcheck", "--print-limit", "1"] and args[5] == "repro.py"
    e = Corpus(path.parent).load(path)
    ran = (log.parent / "sanitizer.script").read_text()
    assert ran == entry_repro(e.program, e.signature)[0] and payload not in ran
    assert not sentinel.exists()
    assert "ERROR SUMMARY" in (path / "sanitizer.txt").read_text()
    # and it migrated the entry: the stored harness.py is gone (repro.py is left to `repro ENTRY`)
    assert not (path / "harness.py").exists()


def test_sanitize_refuses_an_entry_naming_an_unallowed_backend(tmp_path, capsys, monkeypatch):
    _, path = loop_entry(tmp_path / "corpus")
    d = json.loads((path / "program.json").read_text())
    d["settings"]["backend"] = "evil_module:backend"
    (path / "program.json").write_text(json.dumps(d))
    fake_sanitizer(tmp_path / "bin", tmp_path / "sanitizer")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    rc, _, err = run_cli(["sanitize", path], capsys)
    assert rc == 2 and "--allow-backend evil_module" in err
    assert not (tmp_path / "sanitizer.args").exists()


def test_the_short_repro_check_runs_the_generated_form_never_the_stored_file(tmp_path, monkeypatch):
    """meta.json is data too: a stored repro.py whose digest meta.json claims is not run."""
    import fuzz.program.short_repro as short_repro

    c, path = short_entry(tmp_path)
    generated = (path / "repro.py").read_text()
    ran = []
    monkeypatch.setattr(short_repro, "check_short_repro",
                        lambda script, verdict, timeout: ran.append(script) or (True, "raised", 0.1))
    payload = plant(path, tmp_path / "SENTINEL")
    meta = json.loads((path / "meta.json").read_text())
    meta["short_repro"].update(script=_digest(payload), lines=1)
    (path / "meta.json").write_text(json.dumps(meta))
    info = check_repro(c, path)
    assert ran == [] and not info.get("checked")
    # the stored file back as its program generates it: the generated text is what runs
    (path / "repro.py").write_text(generated)
    meta["short_repro"]["script"] = _digest(generated)
    (path / "meta.json").write_text(json.dumps(meta))
    info = check_repro(c, path)
    assert ran == [generated] and info["reproduces"] is True


def test_no_module_runs_a_file_it_reads_from_a_corpus():
    """Every module under fuzz/ that starts a process or executes code, reviewed: each runs
    generated source written afresh to a scratch dir, `python -m ...`, pip, nvidia-smi, or a
    tool on its own output. A new module that does fails this until it is looked at."""
    import re

    reviewed = {"fuzz/campaign/followups/supervisor.py", "fuzz/campaign/cluster/node.py", "fuzz/program/interp.py",
                "fuzz/program/short_repro.py", "fuzz/findings/replay.py", "fuzz/findings/report/issue.py",
                "fuzz/findings/sanitizer.py", "fuzz/findings/report/trace.py", "fuzz/findings/status/versions.py",
                "fuzz/findings/store/corpus.py", "fuzz/findings/standalone.py", "fuzz/judge/steps.py",
                "fuzz/judge/isolated.py",
                # pip (which torch is the newest release) and the C++ compiler's --version, nothing of a corpus
                "fuzz/releases.py", "fuzz/pch.py",
                # forks a child that runs a script path it is handed: run_script's scratch repro.py, written
                # afresh from the program, or the runner's own job script, never a file of a corpus
                "fuzz/judge/zygote.py"}
    runs = re.compile(r"subprocess\.(run|Popen|call|check_call|check_output)\(|\brun_command\(|\brun_script\("
                      r"|\brunpy\b|\bexec\(|os\.system\(|os\.exec|spec_from_file_location|\bexecfile\b")
    found = {str(f.relative_to(ROOT)) for f in (ROOT / "fuzz").rglob("*.py")
             if any(runs.search(ln) for ln in f.read_text().splitlines()
                    if not ln.lstrip().startswith(("#", "def ")))}
    assert found <= reviewed, found - reviewed
    assert "fuzz/findings/sanitizer.py" in found  # the pattern sees what it looks for


# -- migration ---------------------------------------------------------------------------------

def test_dedupe_migrates_an_older_corpus(tmp_path, capsys):
    root = tmp_path / "corpus"
    _, no_short = loop_entry(root)
    _, short = short_entry(root, settled=True)
    xla = root / "301a48dbd50a"  # a shipped torch_xla entry: its repro.py is its harness, and stays so
    shutil.copytree(ROOT / "corpus" / xla.name, xla)
    e = Corpus(root).load(xla)  # its harness as this shapefuzz generates it (the shipped file may be older)
    xla_repro = settled_scripts(e.program, e.verdict, e.signature, e.meta,
                                device=entry_repro_device(xla, e.program))[0]["repro.py"]
    (xla / "repro.py").write_text(xla_repro)
    old_layout(no_short, repro_is_harness=True)
    old_layout(short, repro_is_harness=False)
    (xla / "harness.py").write_text(xla_repro)
    short_repro = (short / "repro.py").read_text()
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != ".lock"}

    rc, out, _ = run_cli(["dedupe", root, "--dry-run"], capsys)
    assert rc == 0 and out.count("would be migrated (harness.py removed") == 3, out
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != ".lock"} == snapshot

    rc, out, _ = run_cli(["dedupe", root], capsys)
    assert rc == 0 and f"{no_short.name}: migrated (harness.py removed, repro.py rewritten" in out, out
    assert list(root.rglob("harness.py")) == []
    assert "--harness" in (no_short / "repro.py").read_text()
    assert (short / "repro.py").read_text() == short_repro and (xla / "repro.py").read_text() == xla_repro
    rc, out, _ = run_cli(["dedupe", root], capsys)
    assert rc == 0 and "migrated" not in out  # once is enough



def test_the_shipped_corpus_is_data():
    """The bar: no stored harness, and at most 4,000 lines of Python in all."""
    corpus = ROOT / "corpus"
    assert list(corpus.rglob("harness.py")) == []
    lines = sum(len(p.read_text().splitlines()) for p in corpus.rglob("*.py"))
    assert lines <= 4000, lines
