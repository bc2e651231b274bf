"""Every file a corpus holds is data: each JSON file kind is held to
its schema (fuzz/findings/store/corpus_files.py), a wrong one is exit 2 with one line
naming the file and the field, nothing is written outside the corpus, and no
known-issues regex hangs. The program files' own loader is in test_untrusted.py."""

import copy
import errno
import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.findings.store.corpus import Corpus, CorpusError
from fuzz.findings.store.corpus_files import KINDS, CorpusFileError, OutsideCorpus, read
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Outcome, Verdict

from helpers import program
from test_untrusted import BASE, mutants, one_line_error, run_cli

RELU = [("relu", ["x0"], {})]


def make_entry(root: Path, message="values mismatch", outcome=Outcome.DIVERGENCE) -> Path:
    """A corpus entry with a hand-made verdict (nothing judged)."""
    p = program(RELU, backend="eager")
    v = Verdict(outcome=outcome, where="output 0", message=message)
    path, _ = Corpus(root).record(p, v, signature(v, p))
    return path


def edit_json(path: Path, **fields):
    d = json.loads(path.read_text())
    d.update(fields)
    path.write_text(json.dumps(d))


def snapshot(d: Path):
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


# -- wrong types: one line naming the file and the field ----------------------------------

META_DAMAGE = {
    "upstream as a string": ({"upstream": "https://x"}, "meta.json: upstream: must be object"),
    "versions.affected as ints": ({"versions": {"affected": [2, 3]}}, "meta.json: versions.affected[0]: must be string"),
    "short_repro as a list": ({"short_repro": [1]}, "meta.json: short_repro: must be object"),
    "last_replay as a string": ({"last_replay": "fixed"}, "meta.json: last_replay: must be object"),
    "seen_with.ops as an int": ({"seen_with": {"ops": 3}}, "meta.json: seen_with.ops: must be array"),
}


@pytest.mark.parametrize("what", sorted(META_DAMAGE))
def test_bugs_names_an_entry_with_a_wrong_typed_meta_field(what, tmp_path, capsys):
    good = make_entry(tmp_path / "corpus")
    bad = make_entry(tmp_path / "corpus", outcome=Outcome.NONFINITE)
    fields, needle = META_DAMAGE[what]
    edit_json(bad / "meta.json", **fields)
    rc, out, err = run_cli(["bugs", tmp_path / "corpus", "--json"], capsys, tmp_path)
    one_line_error(rc, err, str(bad.name), needle, "not listed")
    assert [r["key"] for r in json.loads(out)] == [good.name]  # the readable one is still listed


def test_report_of_a_verdict_with_a_non_string_where_is_one_line(tmp_path, capsys):
    entry = make_entry(tmp_path / "corpus")
    edit_json(entry / "verdict.json", where=["# heading"])
    rc, out, err = run_cli(["report", entry], capsys, tmp_path)
    one_line_error(rc, err, "verdict.json: where: must be string")


@pytest.mark.parametrize("name,text,needle", [
    ("meta.json", '{"hits": 1, "hits": 2, "first_seen": "2026-01-01", "last_seen": "2026-01-01"}', 'duplicate key "hits"'),
    ("program.json", json.dumps(BASE)[:-1] + ', "seed": 1, "seed": 2}', 'duplicate key "seed"'),
    ("env.json", "[" * 5000 + "]" * 5000, "nested (too deeply|more than 64 deep)"),  # by the parser or after it
    ("verdict.json", "{\"numbers\": " + "[" * 100 + "]" * 100 + "}", "nested more than 64 deep"),
    ("signature.json", '{"key": "' + "a" * 200_000 + '"}', "larger than the limit"),
])
def test_duplicate_keys_deep_nesting_and_size_are_refused(name, text, needle, tmp_path):
    entry = make_entry(tmp_path / "corpus")
    (entry / name).write_text(text)
    with pytest.raises(CorpusError, match=needle):
        Corpus(tmp_path / "corpus").load(entry)


def test_a_case_file_with_a_duplicate_key_is_one_line(tmp_path, capsys):
    case = tmp_path / "case.json"
    case.write_text(json.dumps(BASE)[:-1] + ', "seed": 1, "seed": 2}')
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    one_line_error(rc, err, str(case), 'duplicate key "seed"')


# -- known issues: refused alike, and no regex hangs --------------------------------------

@pytest.mark.parametrize("rules,needle", [
    ([{"message": "set(Storage"}], "rule 0: 'message' is not a valid regex"),
    ([{"message": 3}], "rule 0: 'message' must be a string"),
    ({"rules": []}, "must be a JSON list of rules"),
    ([{"message": "x" * 3000}], "rule 0: message: must be at most 2000 characters"),
])
@pytest.mark.parametrize("command", ["bugs", "replay"])
def test_a_malformed_known_issues_file_is_refused_by_every_command(command, rules, needle, tmp_path, capsys):
    make_entry(tmp_path / "corpus")
    (tmp_path / "corpus" / "known_issues.json").write_text(json.dumps(rules))
    before = snapshot(tmp_path / "corpus")
    rc, out, err = run_cli([command, tmp_path / "corpus"], capsys, tmp_path)
    one_line_error(rc, err, "known_issues.json", needle)
    assert snapshot(tmp_path / "corpus") == before


def test_a_catastrophic_regex_counts_as_no_match_and_never_hangs(tmp_path, capsys):
    from fuzz.findings.status.rule_regex import ENGINE

    entry = make_entry(tmp_path / "corpus", message="a" * 30 + "!")
    (tmp_path / "corpus" / "known_issues.json").write_text(json.dumps([{"message": "^(a|aa)+$"}]))
    start = time.monotonic()
    rc, out, err = run_cli(["bugs", tmp_path / "corpus", "--json"], capsys, tmp_path)
    assert time.monotonic() - start < 30, "the regex was not bounded"
    assert rc == 0, err
    assert [r["status"] for r in json.loads(out)] == ["pending shrink"]  # not known: the rule did not match
    if ENGINE == "regex":  # the backtracking fallback gives up on it; RE2 answers in linear time
        assert "known-issues rule 0" in err and "counts as no match" in err
    # the old engine would not answer: the same rule with a message that matches still matches
    edit_json(entry / "verdict.json", message="aaaa")
    rc, out, err = run_cli(["bugs", tmp_path / "corpus", "--json"], capsys, tmp_path)
    assert [r["status"] for r in json.loads(out)] == ["known upstream"], err


# -- paths: nothing written outside the corpus --------------------------------------------

def test_a_symlinked_entry_is_never_written_through(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    real = make_entry(corpus)
    outside = tmp_path / "outside"
    os.rename(real, outside)
    os.symlink(outside, real)
    before = snapshot(outside)
    for argv in (["report", real, "--write"], ["repro", corpus], ["repro", real], ["bugs", corpus, "--write"],
                 ["triage", real]):
        rc, out, err = run_cli(argv, capsys, tmp_path)
        assert rc in (1, 2) and "Traceback" not in err, (argv, rc, err)  # repro CORPUS: a row per entry, exit 1
        assert "symlink" in out + err, (argv, out, err)
    assert snapshot(outside) == before
    assert sorted(p.name for p in outside.iterdir()) == sorted(before)  # no .lock, no report.md
    with pytest.raises(OutsideCorpus):
        Corpus(corpus).set_meta(real, "x", 1)


def test_an_index_target_is_an_entry_key_never_a_path(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    entry = make_entry(corpus)
    outside = tmp_path / "outside"
    outside.mkdir()
    (corpus / ".index.json").write_text(json.dumps({"version": 1, "keys": {"0123456789ab": "../outside"}}))
    with pytest.raises(CorpusError, match=r"index\.json: keys\[\"0123456789ab\"\]: \"\.\./outside\" is not an entry"):
        Corpus(corpus).resolve("0123456789ab")
    # a finding of that key neither writes there nor is counted: the index is refused
    p = program(RELU, backend="eager")
    v = Verdict(outcome=Outcome.DIVERGENCE, where="output 0", message="values mismatch")
    with pytest.raises(CorpusError):
        Corpus(corpus).record(p, v, signature(v, p).__class__("0123456789ab", "x"))
    assert list(outside.iterdir()) == []
    rc, out, err = run_cli(["repro", entry], capsys, tmp_path)
    assert rc == 0, err  # an entry of its own is found without the index


# -- op params ----------------------------------------------------------------------------

@pytest.mark.parametrize("params,needle", [
    ({"padd": [1, 1], "mode": "constant"}, "ops[1] pad: unknown param 'padd' (it takes mode, pad, value)"),
    ({"pad": [1, 1], "mode": "constant", "extra": 1}, "ops[1] pad: unknown param 'extra'"),
])
def test_an_op_param_the_op_does_not_take_is_one_line(params, needle, tmp_path, capsys):
    d = copy.deepcopy(BASE)
    d["ops"][1]["params"] = params
    case = tmp_path / "case.json"
    case.write_text(json.dumps(d))
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    one_line_error(rc, err, needle)


def test_op_params_json_names_every_op():
    from fuzz.program.opdb import OPS
    from fuzz.program.typecheck import op_params

    assert sorted(s.name for s in OPS) == sorted(op_params())


# -- large files load fast or are refused fast -------------------------------------------

@pytest.mark.parametrize("ops,items", [(30, 1000), (64, 4096), (4, 30)])
def test_a_large_program_file_is_answered_within_seconds(ops, items, tmp_path, capsys):
    d = copy.deepcopy(BASE)
    d["ops"] = [{"op": "relu", "args": ["x0" if i == 0 else f"v{i - 1}"], "out": f"v{i}",
                 "params": {f"p{j}": list(range(items)) for j in range(4)}} for i in range(ops)]
    d["outputs"] = [f"v{ops - 1}"]
    case = tmp_path / "case.json"
    case.write_text(json.dumps(d))
    start = time.monotonic()
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    assert time.monotonic() - start < 20
    one_line_error(rc, err)  # too many values, or relu takes no params


def test_a_program_file_over_the_size_cap_is_refused_unparsed(tmp_path, capsys):
    case = tmp_path / "case.json"
    case.write_text(json.dumps(BASE)[:-1] + ', "x": "' + "a" * 3_000_000 + '"}')
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    one_line_error(rc, err, "larger than the limit")


# -- a full disk in a follow-up -----------------------------------------------------------

def test_a_merge_cut_short_by_a_full_disk_is_finished_by_doing_it_again(tmp_path, monkeypatch):
    import fuzz.findings.store.corpus as corpus_module
    from fuzz.findings.signature import Signature

    c = Corpus(tmp_path / "corpus")
    src = make_entry(tmp_path / "corpus")
    sig = Signature.of_text("minimal text", minimal=True)
    real, calls = corpus_module._write_atomic, []

    def full_once(path, text):
        calls.append(path)
        if Path(path).name == "meta.json" and len(calls) > 1 and not getattr(full_once, "done", False):
            full_once.done = True
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, text)

    monkeypatch.setattr(corpus_module, "_write_atomic", full_once)
    with pytest.raises(OSError):
        c.rekey(src, sig)
    assert sorted(e.key for e in c.entries()) == sorted([src.name, sig.key])  # one bug as two entries
    c.rekey(src, sig)  # the retry
    assert [e.key for e in c.entries()] == [sig.key] and c.resolve(src.name).name == sig.key


def test_a_follow_up_that_meets_a_full_disk_is_retried_on_resume(tmp_path, monkeypatch):
    import fuzz.campaign.followups.runner as followup
    import fuzz.findings.dedupe as dedupe

    entry = make_entry(tmp_path / "corpus")
    state = tmp_path / "st"
    state.mkdir()
    log = followup.JobLog(str(state), str(tmp_path / "corpus"))  # the runner is told its corpus
    log.queue(entry.name, ["shrink"], {})

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(dedupe, "settle", full)
    monkeypatch.setattr(followup, "_DISK_FULL_HERE", set())
    ran, _ = followup._one_at_a_time(log, linger=0, max_jobs=5, log=lambda *a: None, switch=False)
    assert ran == 1  # tried once, then held back in this runner: no loop on a full disk
    job = followup.JobLog(str(state)).refresh().jobs[f"shrink:{entry.name}"]
    assert job.state == "queued" and job.unfinished_starts == 0 and "disk is full" in job.detail + "disk is full"
    monkeypatch.setattr(followup, "_DISK_FULL_HERE", set())  # a fresh runner: the resume
    assert [j.id for j in followup.JobLog(str(state)).refresh().pending()] == [f"shrink:{entry.name}"]


# -- the loader fuzzes itself: every file kind --------------------------------------------

def _base_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("base") / "corpus"
    entry = make_entry(root)
    Corpus(root).set_meta(entry, "upstream", {"url": "https://x", "state": "open", "note": "n"})
    Corpus(root).set_meta(entry, "versions", {"affected": ["2.9"], "first_fixed": None})
    files = {name: json.loads((entry / name).read_text()) for name in
             ("meta.json", "verdict.json", "signature.json", "env.json")}
    files[".index.json"] = {"version": 1, "keys": {"0123456789ab": entry.name}}
    files["known_issues.json"] = [{"message": "values", "url": "https://x", "status": "open"}]
    return root, entry, files


@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_corpus_files_are_loaded_or_refused_in_one_line(tmp_path_factory, capsys, data):
    import shutil

    root, entry, files = _base_files(tmp_path_factory)
    name = data.draw(st.sampled_from(sorted(files)), label="file")
    sentinel = root.parent / "PWNED"
    d = data.draw(mutants(files[name], sentinel), label="mutant")
    path = root / name if name in (".index.json", "known_issues.json") else entry / name
    path.write_text(json.dumps(d))
    rc, out, err = run_cli(["bugs", root, "--json"], capsys, root.parent)
    assert "Traceback" not in err, err[-3000:]
    assert rc in (0, 2), (rc, err[-2000:])
    if rc == 2:
        assert all(line.startswith("shapefuzz:") for line in err.strip().splitlines()), err
    try:
        read(path, name)
    except CorpusFileError as e:
        assert "\n" not in str(e) and str(path) in str(e)
    assert not sentinel.exists()
    shutil.rmtree(root.parent)


def test_every_kind_has_a_schema_and_the_corpus_fits_it():
    from fuzz.findings.store.corpus_files import schema

    root = Path(__file__).resolve().parent.parent / "corpus"
    assert all(definition in schema()["$defs"] for definition, _, _ in KINDS.values())
    for name in KINDS:
        for path in list(root.glob(f"*/{name}")) + list(root.glob(f"*/variants/*/{name}")) + list(root.glob(name)):
            read(path, name)
