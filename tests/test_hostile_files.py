"""Files made to hurt, one cause at a time: what is not a regular file, JSON the parser takes but the code
would not survive, a name with a newline, a symlinked subdirectory, a module named by a program, a rules file
made to be slow, text that drives a terminal or links itself, errors that are not one line, and resources
hidden behind a view or a stored script. Each answer is exit 2 with one line (or a row saying why) within
seconds, nothing written outside the dirs given, no module imported."""

import copy
import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from fuzz.campaign.state import StateError
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.store.corpus_files import OutsideCorpus

from test_corpus_files import make_entry, snapshot
from test_untrusted import BASE, one_line_error, run_cli


def within(seconds, fn):
    """fn() in a thread: its value (or its exception), or a failure when it has not returned in `seconds`."""
    out = []

    def run():
        try:
            out.append((fn(), None))
        except BaseException as e:  # noqa: BLE001 - raised again below, in the test's thread
            out.append((None, e))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s (blocked on a file?)"
    value, e = out[0]
    if e is not None:
        raise e
    return value


def state_dir(root: Path) -> Path:
    """A small campaign state dir, made by hand: its config and one case."""
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"backend": "eager", "device": "cpu", "seed": 0}))
    (root / "cases.jsonl").write_text(json.dumps({"i": 0, "outcome": "ok", "seconds": 1.0}) + "\n")
    return root


# -- 1. files that are not regular files ---------------------------------------------------

def test_a_fifo_as_a_program_a_rules_file_an_index_or_a_state_file_is_one_line(tmp_path, capsys):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    rc, out, err = within(20, lambda: run_cli(["check", fifo], capsys, tmp_path))
    one_line_error(rc, err, "p.json", "FIFO")
    corpus = tmp_path / "corpus"
    make_entry(corpus)
    os.mkfifo(corpus / "known_issues.json")
    rc, out, err = within(20, lambda: run_cli(["bugs", corpus], capsys, tmp_path))
    one_line_error(rc, err, "known_issues.json", "FIFO")
    os.unlink(corpus / "known_issues.json")
    os.mkfifo(corpus / ".index.json")
    from fuzz.findings.store.corpus import CorpusError

    with pytest.raises(CorpusError, match="index.json: is a FIFO"):
        within(20, lambda: Corpus(corpus).resolve("0123456789ab"))
    st = state_dir(tmp_path / "st")
    for name in ("state.json", "jobs.jsonl", "findings.jsonl"):
        os.mkfifo(st / name)
        rc, out, err = within(20, lambda: run_cli(["stats", st], capsys, tmp_path))
        one_line_error(rc, err, name, "FIFO")
        os.unlink(st / name)


def test_the_one_reader_refuses_what_is_not_a_regular_file(tmp_path):
    from fuzz.datafile import DataFileError, read_bytes

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for path, what in ((tmp_path / "fifo", "a FIFO"), (tmp_path / "dir", "a directory"), ("/dev/zero", "a character device")):
        with pytest.raises(DataFileError, match=f"is {what}, not a regular file"):
            within(10, lambda: read_bytes(path, 100))


# -- 2. JSON the parser takes but the code would not survive -------------------------------

HUGE = "9" * 5000  # past Python's 4300 digits: int() raises a plain ValueError


def test_an_integer_of_thousands_of_digits_is_one_line_in_every_file(tmp_path, capsys):
    case = tmp_path / "case.json"
    case.write_text(json.dumps(BASE)[:-1] + f', "seed": {HUGE}}}')
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    one_line_error(rc, err, "case.json", "digits")
    corpus = tmp_path / "corpus"
    entry = make_entry(corpus)
    for name, edit in (("meta.json", lambda t: t.replace('"hits": 1', f'"hits": {HUGE}')),
                       ("verdict.json", lambda t: t.replace('"outcome"', f'"call": {HUGE}, "outcome"'))):
        before = (entry / name).read_text()
        (entry / name).write_text(edit(before))
        rc, out, err = run_cli(["bugs", corpus, "--json"], capsys, tmp_path)
        assert "Traceback" not in err and name in err and "digits" in err, (rc, err)
        (entry / name).write_text(before)
    (corpus / "known_issues.json").write_text(f'[{{"outcome": "divergence", "note": "x", "status": "open", '
                                              f'"checked": "", "url": "", "signature": "", "ops": ["relu"], '
                                              f'"escapes": ["relu"], "operand_dtypes": {{"relu": ["float32"]}}, '
                                              f'"device": "", "message": "", "frame": "", "exc_type": "", '
                                              f'"setting": "", "outcomes": ["divergence"]}}, {HUGE}]')
    rc, out, err = run_cli(["bugs", corpus], capsys, tmp_path)
    one_line_error(rc, err, "known_issues.json", "digits")
    st = state_dir(tmp_path / "st")
    for name, text in (("cases.jsonl", f'{{"i": {HUGE}, "outcome": "ok"}}\n'),
                       ("config.json", f'{{"backend": "eager", "device": "cpu", "seed": {HUGE}}}')):
        before = (st / name).read_text()
        (st / name).write_text(text)
        rc, out, err = run_cli(["stats", st], capsys, tmp_path)
        one_line_error(rc, err, name, "digits")
        (st / name).write_text(before)


def test_deep_nesting_in_a_state_file_is_one_line(tmp_path, capsys):
    st = state_dir(tmp_path / "st")
    (st / "state.json").write_text('{"nodes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    rc, out, err = run_cli(["stats", st], capsys, tmp_path)
    one_line_error(rc, err, "state.json", "nested")
    (st / "state.json").unlink()
    (st / "jobs.jsonl").write_text('{"job": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    rc, out, err = run_cli(["stats", st], capsys, tmp_path)
    one_line_error(rc, err, "jobs.jsonl", "line 1")


@pytest.mark.parametrize("field,value,needle", [
    ("summary", {"minimal_flags": "split_reductions"}, "summary.minimal_flags"),
    ("summary", {"flags_turning_off": [3]}, "summary.flags_turning_off[0]"),
    ("rows", [{"summary": ["not", "text"]}], "rows[0].summary"),
])
def test_a_loose_nested_field_of_an_ablation_is_held_to_its_shape(field, value, needle, tmp_path):
    from fuzz.findings.store.corpus_files import CorpusFileError, read

    (tmp_path / "ablation.json").write_text(json.dumps({field: value}))
    with pytest.raises(CorpusFileError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        read(tmp_path / "ablation.json")


def test_a_versions_record_of_another_shape_is_refused(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    entry = make_entry(corpus)
    Corpus(corpus).set_meta(entry, "versions", {"releases": {"2.9": "failed"}, "cpu": {"affected": [3]}})
    rc, out, err = run_cli(["bugs", corpus, "--json"], capsys, tmp_path)
    assert "Traceback" not in err and "meta.json: versions" in err, err


# -- 3. anchors that let a newline through --------------------------------------------------

@pytest.mark.parametrize("where,value", [("size", "s0\n"), ("device", "cpu\n"), ("name", "x0\n")])
def test_a_name_with_a_final_newline_is_refused(where, value, tmp_path, capsys):
    d = copy.deepcopy(BASE)
    if where == "size":
        d["sizes"] = {value: [3, 5]}
        d["inputs"][0]["shape"][0] = value
    elif where == "device":
        d["settings"]["device"] = value
    else:
        d["inputs"][0]["name"] = value
    case = tmp_path / "case.json"
    case.write_text(json.dumps(d))
    rc, out, err = run_cli(["repro", case, "-o", tmp_path / "repro.py"], capsys, tmp_path)
    one_line_error(rc, err)
    assert not (tmp_path / "repro.py").exists()


# -- 4. writes through a symlinked subdirectory ---------------------------------------------

def test_a_symlinked_unconfirmed_dir_is_never_moved_into(tmp_path):
    from fuzz.findings.standalone import set_aside

    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    entry = make_entry(corpus)
    outside.mkdir()
    os.symlink(outside, corpus / "unconfirmed")
    with pytest.raises(OutsideCorpus, match="unconfirmed: is a symlink"):
        set_aside(Corpus(corpus), entry)
    assert entry.is_dir() and list(outside.iterdir()) == []


def test_a_symlinked_variants_dir_is_never_written_through(tmp_path):
    from fuzz.judge.verdict import Outcome

    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    keep, merged = make_entry(corpus), make_entry(corpus, outcome=Outcome.NONFINITE)
    outside.mkdir()
    os.symlink(outside, keep / "variants")
    c = Corpus(corpus)
    with pytest.raises(OutsideCorpus, match="variants: is a symlink"):
        c._save_variant(keep, merged.name, c.load(merged))
    assert list(outside.iterdir()) == []


def test_an_entry_under_a_symlinked_unconfirmed_is_never_written(tmp_path):
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    entry = make_entry(corpus)
    outside.mkdir()
    os.rename(entry, outside / entry.name)
    os.symlink(outside, corpus / "unconfirmed")
    before = snapshot(outside)
    with pytest.raises(OutsideCorpus):
        Corpus(corpus).set_meta(corpus / "unconfirmed" / entry.name, "x", 1)
    assert snapshot(outside) == before


def test_a_state_dirs_symlinked_subdir_is_refused_before_a_write(tmp_path, capsys):
    from fuzz.campaign.state import CampaignState

    st, outside = state_dir(tmp_path / "st"), tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, st / "programs")
    with pytest.raises(StateError, match="programs is a symlink"):
        CampaignState.open(str(st), {"backend": "eager", "device": "cpu", "seed": 0})
    os.unlink(st / "programs")
    os.symlink(outside, st / "followup-cache")  # `followup` makes its runner's caches there
    rc, out, err = run_cli(["followup", st], capsys, tmp_path)
    one_line_error(rc, err, "followup-cache is a symlink")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("entry", ["../../elsewhere/aaaaaaaaaaaa", "aaaaaaaaaaaa/../../x", "AAAAAAAAAAAA"])
def test_a_job_naming_a_path_is_refused(entry, tmp_path, capsys):
    st = state_dir(tmp_path / "st")
    (st / "jobs.jsonl").write_text(json.dumps({"job": f"shrink:{entry}", "event": "queued", "type": "shrink",
                                               "entry": entry, "time": 1.0}) + "\n")
    rc, out, err = run_cli(["followup", st], capsys, tmp_path)
    one_line_error(rc, err, "jobs.jsonl", "line 1")


def test_a_jobs_corpus_param_is_never_the_corpus_it_works_on(tmp_path):
    from fuzz.campaign.followups.runner import JobLog

    st, other = state_dir(tmp_path / "st"), tmp_path / "someone-elses-corpus"
    (st / "jobs.jsonl").write_text(json.dumps({"job": "shrink:aaaaaaaaaaaa", "event": "queued", "type": "shrink",
                                               "entry": "aaaaaaaaaaaa", "params": {"corpus": str(other)},
                                               "time": 1.0}) + "\n")
    job = JobLog(str(st), str(st / "corpus")).refresh().jobs["shrink:aaaaaaaaaaaa"]
    assert job.corpus == str(st / "corpus") and "corpus" not in job.params


def test_followup_of_a_state_dir_that_names_another_corpus_says_so(tmp_path, capsys):
    st, other = state_dir(tmp_path / "st"), tmp_path / "someone-elses-corpus"
    (st / "state.json").write_text(json.dumps({"corpus_dir": str(other)}))
    rc, out, err = run_cli(["followup", st], capsys, tmp_path)
    one_line_error(rc, err, "--corpus")
    assert not other.exists()
