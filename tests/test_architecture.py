"""The structure the architecture notes promise, checked: no import cycles
(function-level imports count), no module but the op database over 600
lines, no branch on the program kind or the backend name outside the
kinds (fuzz/kinds) and the backend table (fuzz/judge/backends.py), and no
function under fuzz/ over 80 lines."""

from helpers import script_module


def _metrics():
    return script_module("arch_metrics")


def test_no_import_cycles():
    assert _metrics().measure()["cycles"] == []


def test_no_module_over_600_lines():
    m = _metrics().measure()
    sizes = dict(m["largest"])
    assert all(n <= 600 for name, n in sizes.items() if not name.startswith("fuzz.program.ops")), sizes


def test_no_function_over_80_lines():
    assert _metrics().measure()["long_functions"] == []


def test_no_kind_or_backend_branch_outside_their_owners():
    assert _metrics().measure()["branches"] == []


def test_the_metric_sees_a_branch_and_a_cycle(tmp_path, monkeypatch):
    """The checks above can fail: a planted branch, cycle and long function are found."""
    mod = _metrics()
    pkg = tmp_path / "fuzz"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f(p):\n    from fuzz import b\n    return p.backend == 'inductor'\n")
    (pkg / "b.py").write_text("from fuzz import a\n")
    (pkg / "c.py").write_text("def long():\n" + "    x = 1\n" * 80 + "\n\ndef short():\n" + "    x = 1\n" * 79)
    (tmp_path / "strategies").mkdir()
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    m = mod.measure()
    assert m["cycles"] == [["fuzz.a", "fuzz.b"]]
    assert len(m["branches"]) == 1 and "fuzz/a.py:3" in m["branches"][0]
    assert m["long_functions"] == ["fuzz/c.py:1 long (81 lines)"]


def test_imports_go_down_the_layers_of_findings_and_campaign():
    """Each layer (scripts/arch_metrics.py LAYERS, as fuzz/findings/__init__.py tells it) imports only its own
    and lower ones: the corpus on disk knows nothing of reports, a report nothing of the campaign."""
    assert _metrics().measure()["upward_imports"] == []


def test_no_package_directory_holds_more_than_20_modules():
    assert _metrics().measure()["crowded_packages"] == []


def test_the_layer_check_sees_an_upward_import_and_a_crowded_package(tmp_path, monkeypatch):
    mod = _metrics()
    for d in ("fuzz/findings/store", "fuzz/findings/report", "strategies"):
        (tmp_path / d).mkdir(parents=True)
    for d in ("fuzz", "fuzz/findings", "fuzz/findings/store", "fuzz/findings/report"):
        (tmp_path / d / "__init__.py").write_text("")
    (tmp_path / "fuzz/findings/report/issue.py").write_text("from fuzz.findings.store import corpus\n")
    (tmp_path / "fuzz/findings/store/corpus.py").write_text("def f():\n    from fuzz.findings.report import issue\n")
    for i in range(21):
        (tmp_path / "strategies" / f"m{i}.py").write_text("")
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    m = mod.measure()
    assert {u.split(" (")[0] for u in m["upward_imports"]} <= {"fuzz.findings.store.corpus -> fuzz.findings.report",
                                                               "fuzz.findings.store.corpus -> fuzz.findings.report.issue"}
    assert m["upward_imports"] and "the corpus on disk imports what a person reads" in m["upward_imports"][0]
    assert m["crowded_packages"] == ["strategies: 21 modules"]


def test_no_comment_cites_a_tracker_number():
    """A comment says why in words: "issue 27" means nothing to a reader without the tracker."""
    assert _metrics().tracker_citations() == []


def test_the_citation_check_sees_ours_and_spares_upstreams(tmp_path, monkeypatch):
    mod = _metrics()
    pkg = tmp_path / "fuzz"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        '"""Issue 40\'s bar."""\n'
        "x = 1  # upstream: pytorch#179571, issue #139789, https://github.com/pytorch/pytorch/issues/12\n"
        "# the conjunctions of the\n# issue\n# 27 list\n"
        "y = 'issues 12 and 14'  # issue-41\n")
    (tmp_path / "strategies").mkdir()
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    assert mod.tracker_citations() == ["fuzz/a.py:1: Issue 40", "fuzz/a.py:3: issue 27",
                                       "fuzz/a.py:6: issues 12", "fuzz/a.py:6: issue-41"]
