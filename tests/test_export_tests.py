"""`shapefuzz export-tests`: the corpus as one file of strict-xfail tests
that needs torch and pytest only; it compiles, a test xfails while its bug
stands and is reported once the bug is gone, and hostile entry text stays
data."""

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from fuzz.cli import main
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.report.export_tests import entry_test, export, function_body
from fuzz.findings.signature import signature
from fuzz.judge.runner import run_case

from helpers import program

ROOT = Path(__file__).resolve().parent.parent
CPU_ENTRY = "d649e53c6196"  # aot_eager on CPU, a wrong value (whether it still fails depends on the release)
ERROR_ENTRY = "67edeaa119f4"  # CUDA, an exception
XLA_ENTRY = "4e0a2526faf4"


def _tests(text: str) -> dict:
    """{test name: its decorators' source} of a generated file."""
    tree = ast.parse(text)
    return {f.name: [ast.unparse(d) for d in f.decorator_list] for f in tree.body
            if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")}


def _pytest(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    # the file alone, as upstream would run it (fuzz importable only for a planted backend)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rxXs", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-W", "ignore", str(path)], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


def test_the_shipped_corpus_exports_to_a_file_of_strict_xfail_tests(tmp_path):
    out = tmp_path / "test_bugs.py"
    assert main(["export-tests", str(ROOT / "corpus"), "-o", str(out)]) == 0
    text = out.read_text()
    compile(text, str(out), "exec")
    tests = _tests(text)
    keys = {e.key for e in Corpus(ROOT / "corpus").entries()}
    assert tests and {n[len("test_"):] for n in tests} <= keys and f"test_{XLA_ENTRY}" not in tests
    assert all(any(d.startswith("pytest.mark.xfail(strict=True") for d in ds) for ds in tests.values())
    assert "requires_cuda" in tests[f"test_{ERROR_ENTRY}"] and "requires_cuda" not in tests[f"test_{CPU_ENTRY}"]
    imports = {a.name.split(".")[0] for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in n.names} | {n.module.split(".")[0] for n in ast.walk(ast.parse(text))
                                    if isinstance(n, ast.ImportFrom) and n.module}
    assert imports <= {"torch", "pytest"}, imports


def test_a_cpu_entry_xfails_while_its_bug_stands_and_a_cuda_one_skips_without_cuda(tmp_path):
    """A planted CPU bug (one that stands on every release) xfails; a shipped CUDA entry skips here."""
    corpus = Corpus(tmp_path / "c")
    p = program([("relu", ["x0"], {})], marks=["dynamic"], backend="fuzz.planted:corrupt_large")
    v = run_case(p)
    cpu = corpus.record(p, v, signature(v, p))[0].name
    shutil.copytree(ROOT / "corpus" / ERROR_ENTRY, tmp_path / "c" / ERROR_ENTRY)
    text, keys, _ = export(tmp_path / "c")
    assert sorted(keys) == sorted([cpu, ERROR_ENTRY])
    (tmp_path / "test_exported.py").write_text(text)
    r = _pytest(tmp_path / "test_exported.py", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"XFAIL test_exported.py::test_{cpu}" in r.stdout and "1 xfailed" in r.stdout, r.stdout
    assert ("1 skipped" in r.stdout) != __import__("torch").cuda.is_available()


def test_a_planted_bug_xfails_and_its_fix_is_reported(tmp_path):
    corpus = Corpus(tmp_path / "c")
    p = program([("relu", ["x0"], {})], marks=["dynamic"], backend="fuzz.planted:corrupt_large")
    v = run_case(p)
    assert v.is_finding
    entry = corpus.record(p, v, signature(v, p))[0]
    out = tmp_path / "test_planted.py"
    assert main(["export-tests", str(tmp_path / "c"), "-o", str(out)]) == 0
    d = json.loads((entry / "program.json").read_text())  # the bug fixed: a correct backend
    d["settings"]["backend"] = "eager"
    (entry / "program.json").write_text(json.dumps(d))
    fixed = entry_test(corpus.load(entry)).replace(f"def test_{entry.name}(", f"def test_{entry.name}_fixed(")
    out.write_text(out.read_text() + fixed)  # one pytest run for both (each run imports torch)
    r = _pytest(out, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"XFAIL test_planted.py::test_{entry.name} " in r.stdout and "1 xfailed" in r.stdout, r.stdout
    assert f"test_{entry.name}_fixed" in r.stdout and "XPASS(strict)" in r.stdout and "1 failed" in r.stdout


def test_hostile_entry_text_stays_a_string(tmp_path):
    """Quotes, newlines and triple quotes in a stored message, a verdict's where and an upstream link end up
    inside string literals: the file compiles, and nothing of them is code."""
    evil = "'''\"\"\"\nimport os\nos._exit(3)  # \\"
    for key in (CPU_ENTRY, ERROR_ENTRY):
        d = tmp_path / "c" / key
        shutil.copytree(ROOT / "corpus" / key, d)
        v = json.loads((d / "verdict.json").read_text())
        v["message"] = evil + v["message"] if v["message"] else v["message"]
        v["where"] = v["where"] + evil if v["where"] else v["where"]
        (d / "verdict.json").write_text(json.dumps(v))
        meta = json.loads((d / "meta.json").read_text())
        meta["upstream"] = {"url": f"https://github.com/pytorch/pytorch/issues/1{evil}", "title": evil}
        (d / "meta.json").write_text(json.dumps(meta))
    text, keys, skipped = export(tmp_path / "c")
    tree = ast.parse(text)
    assert sorted(keys) == sorted([CPU_ENTRY, ERROR_ENTRY]) and not skipped
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "os" not in names and not any(isinstance(n, ast.Attribute) and n.attr == "_exit" for n in ast.walk(tree))
    assert "issues/1" not in text  # a link that is not a plain issue URL is dropped


def test_a_string_of_several_lines_keeps_its_text_in_the_function():
    src = 'x = """a\nb"""\nassert x == "a\\nb"\n'
    body = function_body(src)
    scope = {}
    exec(compile("def f():\n" + "\n".join(body) + "\n    return x\n", "t", "exec"), scope)
    assert scope["f"]() == "a\nb"


def test_a_module_backend_is_left_out_unless_allowed(tmp_path, monkeypatch):
    from fuzz.judge.backends import ALLOW_ENV

    monkeypatch.delenv(ALLOW_ENV, raising=False)
    d = tmp_path / "c" / CPU_ENTRY
    shutil.copytree(ROOT / "corpus" / CPU_ENTRY, d)
    p = json.loads((d / "program.json").read_text())
    p["settings"]["backend"] = "os:system"
    (d / "program.json").write_text(json.dumps(p))
    text, keys, skipped = export(tmp_path / "c")
    assert not keys and "would import module 'os'" in skipped[0][1] and "system" not in text
    monkeypatch.setenv(ALLOW_ENV, "os")  # --allow-backend os
    assert export(tmp_path / "c")[1] == [CPU_ENTRY]
