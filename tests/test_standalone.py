"""A finding that needs the cases a worker ran before it is set aside, not
filed (fuzz/findings/standalone.py); one that fails alone stays an entry."""

import json

from fuzz.findings.report.bugs import bug_rows, markdown
from fuzz.findings.store.corpus import UNCONFIRMED, Corpus
from fuzz.findings.dedupe import settle
from fuzz.findings.replay import entry_dirs
from fuzz.findings.store.repro_files import check_repro, rewrite_scripts
from fuzz.findings.signature import signature
from fuzz.findings.standalone import confirm, unconfirmed
from fuzz.judge.runner import run_case

import planted_extra
from helpers import program

WARM = "tests.planted_extra:wrong_when_warm"


def _record(c, backend, ops=(("add", ["x0", "x0"], {}),)):
    p = program(list(ops), marks=["dynamic"], sizes={"s0": [3, 5]}, backend=backend)
    for _ in range(planted_extra.WARM + 2):  # this process warms up: the backend turns wrong
        v = run_case(p)
        if v.is_finding:
            break
    assert v.is_finding, v.summary()
    path, new = c.record(p, v, signature(v, p), env={"test": True})
    assert new
    return p, v, path


def test_a_history_dependent_finding_is_set_aside_and_its_next_hit_counted_there(tmp_path):
    c = Corpus(tmp_path)
    p, v, path = _record(c, WARM)
    s = settle(c, path, time_budget=60, reruns=1)
    # the shrink reproduced it here (a warm process); its short repro and harness pass alone
    assert s.set_aside and s.key is None and "fresh process" in s.line(), s.line()
    (held,) = unconfirmed(tmp_path)
    assert held.parent.name == UNCONFIRMED and s.path == held
    meta = json.loads((held / "meta.json").read_text())
    assert meta["short_repro"]["reproduces"] is False and meta["standalone"]["reproduces"] is False
    # its short form did not fail alone: repro.py says why and how to generate the harness, and stores none
    note = (held / "repro.py").read_text()
    assert "No short repro: the short form did not fail" in note and "--harness" in note, note
    assert not (held / "harness.py").exists()
    assert list(c.entries()) == [] and entry_dirs(tmp_path) == [] and bug_rows(tmp_path) == []
    assert "1 more finding(s) did not fail alone" in markdown([], tmp_path)
    # nothing lost: the same finding again is a hit on the set-aside entry, not a new entry to shrink
    again, new = c.record(p, v, signature(v, p))
    assert not new and again == held and json.loads((held / "meta.json").read_text())["hits"] == 2
    # another program of the same cause shrinks to the same form, is set aside too, and merges there
    _, _, other = _record(c, WARM, ops=(("relu", ["x0"], {}),))
    s2 = settle(c, other, time_budget=60, reruns=1)
    assert s2.set_aside and s2.path == held and unconfirmed(tmp_path) == [held], s2.line()
    meta = json.loads((held / "meta.json").read_text())
    assert meta["hits"] == 3 and other.name in meta["variants"] and c.resolve(other.name) == held


def test_a_settle_cut_short_after_its_re_key_does_its_standalone_checks_when_run_again(tmp_path):
    c = Corpus(tmp_path)
    _, _, path = _record(c, WARM)
    s = settle(c, path, time_budget=60, reruns=1)
    (held,) = unconfirmed(tmp_path)
    # as if killed between the re-key and the checks: back in place, its checks not done
    meta = json.loads((held / "meta.json").read_text())
    meta["short_repro"] = {k: v for k, v in meta["short_repro"].items()
                           if k not in ("checked", "reproduces", "shown", "full_harness")}
    meta["short_repro"]["lines"] = 20
    meta.pop("standalone")
    (held / "meta.json").write_text(json.dumps(meta))
    back = tmp_path / held.name
    held.rename(back)
    rewrite_scripts(c, back)  # the short form back as repro.py, unchecked
    s = settle(c, back, time_budget=60, reruns=1)
    assert s.set_aside and unconfirmed(tmp_path) == [held] and not back.exists(), s.line()


def test_a_finding_that_fails_alone_stays_an_entry(tmp_path):
    c = Corpus(tmp_path)
    _, _, path = _record(c, "tests.planted_extra:corrupt_always")
    where, note = confirm(c, path, timeout=300)
    assert where == path and note["reproduces"] is True, note
    assert json.loads((path / "meta.json").read_text())["standalone"]["reproduces"] is True
    assert unconfirmed(tmp_path) == [] and [e.path for e in c.entries()] == [path]


def test_a_check_whose_entry_was_merged_into_meanwhile_writes_nothing(tmp_path, monkeypatch):
    """The follow-up runner gives its lock up while a check's fresh process runs
    (isolated.lock_given_up_while_waiting): another job may merge into the entry
    meanwhile. The check's answer is about the script and program it ran, so it is
    dropped when they changed, rather than written over the merge's."""
    import fuzz.findings.standalone as standalone
    import fuzz.program.short_repro as short_repro
    from fuzz.findings.store.scripts import program_digest

    c = Corpus(tmp_path)
    _, _, path = _record(c, WARM)
    assert "lines" in json.loads((path / "meta.json").read_text())["short_repro"]
    merged_repro = "# the short form of the program a merge made the entry's own\n"

    def merged_meanwhile(script, verdict, timeout):
        (path / "repro.py").write_text(merged_repro)
        return False, "it passed", 0.1
    monkeypatch.setattr(short_repro, "check_short_repro", merged_meanwhile)
    info = check_repro(c, path)
    assert not info.get("checked") and (path / "repro.py").read_text() == merged_repro
    assert not json.loads((path / "meta.json").read_text())["short_repro"].get("checked")

    other = program([("relu", ["x0"], {})], marks=["dynamic"], sizes={"s0": [3, 5]}, backend=WARM)

    def program_replaced_meanwhile(entry, timeout):
        (path / "program.json").write_text(other.to_json())
        return False, "it passed"
    monkeypatch.setattr(standalone, "run_harness", program_replaced_meanwhile)
    where, note = confirm(c, path)
    assert where == path and "not_checked" in note and path.is_dir() and unconfirmed(tmp_path) == []
    assert program_digest(c.load(path).program) == program_digest(other)
