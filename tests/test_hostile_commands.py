"""Hostile data against the commands, one cause at a time (the files themselves: test_hostile_files.py): a
module a program names, rules made to be slow or huge, text that drives a terminal or links itself, errors
that must be one line, and resources hidden behind a view or in a stored script."""

import io
import json
import os
import sys
import time

import pytest

from fuzz.findings.store.corpus import Corpus
from fuzz.judge.backends import ALLOW_ENV
from fuzz.judge.verdict import Outcome, Verdict

from helpers import program
from test_corpus_files import RELU, edit_json, make_entry
from test_untrusted import BASE, one_line_error, run_cli


# -- 5. a program's module is imported only on the command line's word ------------------------

@pytest.fixture
def evil_entry(tmp_path, monkeypatch):
    """A corpus entry whose backend is evilmod:attr; evilmod.py (on PYTHONPATH) touches PWNED when imported."""
    (tmp_path / "evilmod.py").write_text(f"open({str(tmp_path / 'PWNED')!r}, 'w').close()\nattr = None\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv(ALLOW_ENV, "evilmod")  # as the campaign that found it ran, with --backend evilmod:attr
    p = program(RELU, backend="evilmod:attr")
    from fuzz.findings.signature import signature

    v = Verdict(outcome=Outcome.DIVERGENCE, where="output 0", message="values mismatch", call=0, sizes={"s0": 3})
    entry, _ = Corpus(tmp_path / "corpus").record(p, v, signature(v, p))  # with a short repro, which versions runs
    monkeypatch.setenv(ALLOW_ENV, "")  # someone else's machine: nothing allowed
    return entry


def test_repro_check_and_versions_never_import_a_programs_module(evil_entry, tmp_path, capsys):
    for argv in (["repro", evil_entry.parent, "--check"], ["repro", evil_entry, "--check"],
                 ["versions", evil_entry, "--python", sys.executable, "--torch", "2.15.0"],
                 ["repro", evil_entry, "--harness"]):
        rc, out, err = run_cli(argv, capsys, tmp_path)
        one_line_error(rc, err, "--allow-backend evilmod")
        assert not (tmp_path / "PWNED").exists(), argv
    assert "evilmod" not in sys.modules


def test_generated_code_gets_a_module_backend_only_when_allowed(monkeypatch):
    from fuzz.judge.backends import BackendError, backend
    from fuzz.program.loading import repro_source

    monkeypatch.setenv(ALLOW_ENV, "")
    p = program(RELU, backend="evilmod:attr")
    for make in (lambda: backend("evilmod:attr").repro_backend(), lambda: repro_source(p)):
        with pytest.raises(BackendError, match="--allow-backend evilmod"):
            make()
    monkeypatch.setenv(ALLOW_ENV, "evilmod")
    assert "importlib.import_module('evilmod')" in repro_source(p)


# -- 6. known-issue rules on a linear-time engine ------------------------------------------

def _bugs_with_rules(tmp_path, capsys, rules, message="values mismatch"):
    corpus = tmp_path / "corpus"
    if not corpus.exists():
        make_entry(corpus, message=message)
    (corpus / "known_issues.json").write_text(json.dumps(rules))
    start = time.monotonic()
    rc, out, err = run_cli(["bugs", corpus, "--json"], capsys, tmp_path)
    return rc, out, err, time.monotonic() - start


def test_a_rule_that_would_take_gigabytes_to_compile_is_one_line_naming_it(tmp_path, capsys):
    rc, out, err, seconds = _bugs_with_rules(tmp_path, capsys, [{"outcome": "divergence"},
                                                                {"message": "(?:a{65535}){65535}"}])
    one_line_error(rc, err, "known_issues.json", "rule 1", "'message'")
    assert seconds < 20


def test_the_fallback_engine_refuses_the_same_rule(tmp_path, capsys, monkeypatch):
    import fuzz.findings.status.rule_regex as rr

    monkeypatch.setattr(rr, "re2", None)  # a machine without google-re2
    for frame, needle in (("a{30000}", "expands"), ("(?:(?:a{100}){100}){100}", "repeats a repetition"),
                          ("^(a|aa)+$", "repeats a repetition or an alternation")):
        rc, out, err, seconds = _bugs_with_rules(tmp_path, capsys, [{"outcome": "divergence", "frame": frame}])
        one_line_error(rc, err, "known_issues.json", "rule 0", "'frame'", needle)
        assert seconds < 20


def test_a_construct_the_engine_refuses_is_one_line_naming_the_rule(tmp_path, capsys):
    from fuzz.findings.status.rule_regex import ENGINE

    if ENGINE != "re2":
        pytest.skip("google-re2 is not installed: the fallback takes backreferences")
    rc, out, err, _ = _bugs_with_rules(tmp_path, capsys, [{"message": "values"}, {"message": r"(a)\1"}])
    one_line_error(rc, err, "rule 1", "linear-time engine")


def test_hundreds_of_backtracking_rules_take_seconds_not_minutes(tmp_path, capsys):
    from fuzz.findings.status.rule_regex import ENGINE

    rules = [{"message": f"^(a|aa)+{'b' * i}$"} for i in range(300)]
    rc, out, err, seconds = _bugs_with_rules(tmp_path, capsys, rules, message="a" * 40 + "!")
    if ENGINE != "re2":  # the fallback engine refuses such a rule at once, naming the linear-time one
        one_line_error(rc, err, "rule 0", "google-re2")
        assert seconds < 30, seconds
        return
    assert rc == 0, err
    assert [r["status"] for r in json.loads(out)] == ["pending shrink"]
    assert seconds < 30, seconds


def test_the_searches_of_one_finding_share_one_budget(monkeypatch):
    import fuzz.findings.status.rule_regex as rr
    from fuzz.findings.status.known import KnownIssues, _rule

    class Slow:  # a search that takes a tenth of a second, whichever engine
        def search(self, text, **kw):
            time.sleep(0.1)

    monkeypatch.setattr(rr, "FILE_SECONDS", 0.5)
    rules = KnownIssues([_rule(i, {"message": f"x{i}"}) for i in range(40)])
    for r in rules.rules:
        r._message._compiled = Slow()
    v = Verdict(outcome=Outcome.DIVERGENCE, where="output 0", message="y")
    start = time.monotonic()
    assert rules.match(None, v) is None
    assert time.monotonic() - start < 1.5  # 40 searches x 0.1 s without the file's budget


def test_the_fallback_drops_a_regex_that_ran_out_of_time(monkeypatch):
    import fuzz.findings.status.rule_regex as rr

    monkeypatch.setattr(rr, "re2", None)
    p = rr.Pattern("x", 1 << 20)
    calls = []

    class RunsOut:
        def search(self, text, **kw):
            calls.append(kw)
            raise TimeoutError

    p._compiled = RunsOut()
    assert p.search("x", rr.Budget()) is None and p.search("x", rr.Budget()) is None
    assert calls == [{"timeout": rr.SEARCH_SECONDS}]  # searched once, with its timeout; never again


def test_a_files_regexes_share_its_memory():
    import fuzz.findings.status.rule_regex as rr

    if rr.ENGINE != "re2":
        pytest.skip("google-re2 is not installed")
    few, many = rr.compile_all(["a+b"] * 2), rr.compile_all(["a+b"] * 20_000)
    assert few[0]._compiled.options.max_mem == rr.MAX_REGEX_MEM
    assert many[0]._compiled.options.max_mem * 20_000 <= max(rr.MAX_FILE_MEM, rr.MIN_REGEX_MEM * 20_000)


# -- 7. text from files reaches a terminal or a report as text ---------------------------------

def test_the_terminal_sanitizer_shows_every_control_as_an_escape():
    from fuzz.terminal import markup, plain

    assert plain("a\x1b]0;pwned\x07\x1b[31mb\x9bc\u202ed\re\n") == "a\\x1b]0;pwned\\x07\\x1b[31mb\\x9bc\\u202ed\\re\n"
    assert plain("a\nb\tc", one_line=True) == "a\\nb\\tc"
    assert markup("[/]x [link=file:///etc]y") == "\\[/]x \\[link=file:///etc]y"


def test_an_escape_sequence_in_a_verdict_never_reaches_the_terminal(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    entry = make_entry(corpus)
    edit_json(entry / "verdict.json", exc_type="Boom\x1b]0;pwned\x07\x1b[2J", message="x\x9b31m\u202e")
    rc, out, err = run_cli(["bugs", corpus], capsys, tmp_path)
    assert rc == 0, err
    for c in ("\x1b", "\x9b", "\u202e", "\x07"):
        assert c not in out + err, repr(c)


def test_an_error_naming_a_hostile_path_is_printed_escaped(tmp_path, capsys):
    rc, out, err = run_cli(["check", tmp_path / "p\x1b[2J.json"], capsys, tmp_path)
    one_line_error(rc, err, "p\\x1b[2J.json")
    assert "\x1b" not in err


def test_rich_markup_in_a_state_file_is_shown_never_read():
    from rich.console import Console

    from fuzz.campaign.progress import summary_table

    s = {"config": {"backend": "[/]x", "device": "[bold]cpu", "seed": 0}, "elapsed": 1.0, "cases": 1,
         "cases_per_second": 1.0, "compile_share": None, "outcomes": {"[/]ok": 1}, "findings_new": {},
         "findings_known": {}, "known_by_rule": {"[/]https://x": 1}, "signatures": 0, "restarts": {},
         "state_dir": "[/]st", "followups": {"pending": 1}}
    buf = io.StringIO()
    Console(file=buf, width=200).print(summary_table(s))
    assert "[/]x" in buf.getvalue() and "[/]https://x" in buf.getvalue()


def test_a_state_config_that_is_not_a_campaigns_is_one_line(tmp_path, capsys):
    st = tmp_path / "st"
    st.mkdir()
    (st / "config.json").write_text(json.dumps({"backend": "[/]x", "device": "cpu", "seed": 0}))
    rc, out, err = run_cli(["stats", st], capsys, tmp_path)
    one_line_error(rc, err, "config.json", "backend")


def test_markdown_defangs_bare_links_and_drops_bidi_and_c1_controls():
    from fuzz.findings.report import markdown as md

    out = md.text("see https://evil.example/x, www.evil.example, HTTP://e and bob@evil.example \u202e\x9b\u2066")
    assert "://" not in out and "www." not in out and "@e" not in out, out
    assert "https\\[:\\]//evil.example/x" in out and "www\\[.\\]evil" in out and "bob\\[\\@\\]evil" in out
    assert not any(c in out for c in "\u202e\x9b\u2066")
    assert not any(c in md.code("a\u202eb\x85") + md.block("a\u2067b") for c in "\u202e\x85\u2067")


# -- 8. every error is one line ----------------------------------------------------------

def test_writes_into_an_unwritable_corpus_are_said_first_in_one_line(tmp_path, capsys, monkeypatch):
    import errno

    import fuzz.files

    corpus = tmp_path / "corpus"
    entry = make_entry(corpus)

    def read_only(path):
        raise PermissionError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(fuzz.files, "check_writable_dir", read_only)
    for argv, needle in ((["bugs", corpus, "--write"], "BUGS.md"), (["report", entry, "--write"], "report.md")):
        rc, out, err = run_cli(argv, capsys, tmp_path)
        one_line_error(rc, err, needle, "Read-only")


def test_an_os_error_of_the_machine_is_one_line(tmp_path, capsys, monkeypatch):
    import errno

    import fuzz.cli.bugs

    corpus = tmp_path / "corpus"
    make_entry(corpus)

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    # the listing once first: every module it imports is imported now, so none binds the patched name for
    # good (`from fuzz.files import write_atomic` run while the patch is in place), and later tests write
    run_cli(["bugs", corpus], capsys, tmp_path)
    monkeypatch.setattr("fuzz.files.write_atomic", full)
    rc, out, err = run_cli(["bugs", corpus, "--write"], capsys, tmp_path)
    one_line_error(rc, err, "BUGS.md", "No space left")
    assert fuzz.cli.bugs  # (the module the write is in)


def test_export_tests_into_a_missing_dir_or_onto_a_dir_is_one_line(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    make_entry(corpus)
    for target, needle in ((tmp_path / "missing" / "t.py", "no directory"), (tmp_path, "is a directory")):
        rc, out, err = run_cli(["export-tests", corpus, "-o", target], capsys, tmp_path)
        one_line_error(rc, err, needle)


@pytest.mark.parametrize("size", ["9" * 400 + "TB", "10000000000000000000000", "99999999999EB"])
def test_an_oversized_size_is_one_line(size, tmp_path, capsys):
    rc, out, err = run_cli(["run", "--cache-limit", size, "--state", tmp_path / "st"], capsys, tmp_path)
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "st").exists()


def test_versions_of_a_symlinked_entry_says_so_on_stderr(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    entry = make_entry(corpus)
    os.rename(entry, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", entry)
    rc, out, err = run_cli(["versions", entry, "--python", sys.executable, "--torch", "2.15.0"], capsys, tmp_path)
    one_line_error(rc, err, "symlink")
    assert out == ""


def test_a_closed_stdout_ends_a_command_quietly(monkeypatch, capsys):
    from fuzz.cli import main

    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self):
            raise io.UnsupportedOperation("no descriptor")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["ops"]) == 0
    assert "Traceback" not in capsys.readouterr().err


# -- 9. resources ----------------------------------------------------------------------------

def test_the_storage_behind_a_strided_view_counts_against_the_element_cap(tmp_path, capsys):
    d = json.loads(json.dumps(BASE))
    d["sizes"] = {"s0": [4096]}
    d["inputs"] = [{"name": "x0", "shape": ["s0", 4096], "layout": "strided", "layout_dim": 0, "step": 64}]
    d["ops"] = [{"op": "relu", "args": ["x0"], "params": {}, "out": "v1"}]
    case = tmp_path / "case.json"
    case.write_text(json.dumps(d))
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    one_line_error(rc, err, "storage of 1073741824 elements")  # its view holds 16777216: within the cap


def test_a_huge_stored_repro_is_refused_unread(tmp_path):
    from fuzz.findings.replay import stored_repro_problem

    repro = tmp_path / "repro.py"
    with open(repro, "wb") as f:
        f.truncate(1 << 30)  # a sparse GiB
    start = time.monotonic()
    assert "larger than the limit" in stored_repro_problem(repro)
    assert time.monotonic() - start < 5


def test_a_stored_repro_the_compiler_cannot_take_is_a_reason_not_a_memory_error(tmp_path):
    from fuzz.findings.replay import stored_repro_problem

    repro = tmp_path / "repro.py"
    for body in ("x = " + "-" * 100_000 + "1\n", "x = " + "+".join(["1"] * 100_000) + "\n"):
        repro.write_text(body)
        why = stored_repro_problem(repro)
        assert why and "repro.py" in why, why
