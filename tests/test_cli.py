"""The command line: exit codes and one-line errors for bad input."""

import json
import os
import subprocess
import sys

import pytest

from helpers import program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shapefuzz(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "fuzz", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)


@pytest.fixture
def case(tmp_path):
    def write(p, name="case.json", text=None):
        path = tmp_path / name
        path.write_text(text if text is not None else p.to_json())
        return str(path)
    return write


RELU = [("relu", ["x0"], {})]


def test_check_ok_and_bug(case):
    ok = shapefuzz("check", case(program(RELU, backend="eager")))
    assert ok.returncode == 0, ok.stderr
    assert "ok" in ok.stdout and "recompiles=" in ok.stdout
    bug = shapefuzz("check", case(program(RELU, sizes={"s0": [3, 9, 12]})), "--backend", "fuzz.planted:corrupt_large")
    assert bug.returncode == 1, bug.stderr
    assert "divergence at call 1" in bug.stdout and "max_abs=1" in bug.stdout


def test_check_json_output(case):
    r = shapefuzz("check", case(program(RELU, backend="eager")), "--json")
    assert json.loads(r.stdout)["outcome"] == "ok"


@pytest.mark.parametrize("text,needle", [
    (None, "cannot read"),
    ("{broken", "not valid JSON"),
    ('{"schema": 99}', "schema version 99 is not supported"),
    ('{"schema": 1, "sizes": {}, "inputs": [], "ops": [], "outputs": []}', "inputs: needs at least 1 item"),
])
def test_check_bad_input_is_one_line_exit_2(case, tmp_path, text, needle):
    path = str(tmp_path / "missing.json") if text is None else case(None, text=text)
    r = shapefuzz("check", path)
    assert r.returncode == 2
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_check_unknown_backend(case):
    r = shapefuzz("check", case(program(RELU)), "--backend", "nosuch")
    assert r.returncode == 2 and "unknown backend" in r.stderr


def test_run_reports_what_it_checked(tmp_path):
    r = shapefuzz("run", "--backend", "eager", "--max-cases", "5", "--seed", "1", "--state", str(tmp_path / "st"),
                  "--corpus", str(tmp_path / "corpus"), "--workers", "0")
    assert r.returncode == 0, r.stderr
    assert "cases" in r.stdout and "5  (" in r.stdout
    assert "timeout=300s per case" in r.stdout.splitlines()[0]


def test_the_case_timeout_defaults_by_device_type():
    from fuzz.cli.run import case_timeout

    assert case_timeout(None, "cpu") == 300 and case_timeout(None, "cuda") == case_timeout(None, "cuda:1") == 120
    assert case_timeout(45.0, "cuda") == 45.0


@pytest.mark.campaign
def test_run_with_planted_bug_records_corpus_entries(tmp_path):
    corpus = tmp_path / "corpus"
    # --no-shrink: the entries as recorded at their findings (their shrink, a job each, is
    # test_campaign.py's and test_planted.py's to check)
    r = shapefuzz("run", "--backend", "fuzz.planted:mutate_input", "--max-cases", "8", "--seed", "1",
                  "--state", str(tmp_path / "st"), "--corpus", str(corpus), "--workers", "0", "--no-shrink")
    assert r.returncode == 1, r.stderr
    outcomes = {d: json.loads((corpus / d / "verdict.json").read_text())["outcome"]
                for d in os.listdir(corpus) if not d.startswith(".")}
    # writing into an input also changes outputs that alias it: those are divergences
    assert "input-mutation-mismatch" in outcomes.values() and set(outcomes.values()) <= {
        "input-mutation-mismatch", "divergence"}
    entry = corpus / next(d for d, o in outcomes.items() if o == "input-mutation-mismatch")
    again = shapefuzz("check", str(entry / "program.json"))
    assert again.returncode == 1, again.stdout + again.stderr


def test_bad_duration_is_a_usage_error():
    r = shapefuzz("run", "--time", "soon")
    assert r.returncode == 2 and "not a duration" in r.stderr


def test_repro_and_ops(case):
    r = shapefuzz("repro", case(program(RELU, backend="inductor")))
    assert r.returncode == 0 and "torch.compile(program, backend='inductor'" in r.stdout
    ops = shapefuzz("ops")
    assert ops.returncode == 0 and "reflect" in ops.stdout or "pad" in ops.stdout


def _imported_modules(path, module):
    """Every module an `import` / `from ... import` in the file of `module`
    names, at any depth (function-level imports too); relative imports
    resolved against `module`'s package."""
    import ast

    package = module if os.path.basename(path) == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(open(path).read(), filename=path)):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            yield base
            yield from (f"{base}.{a.name}" for a in node.names)  # `from fuzz import cli`


def _module_name(path):
    rel = os.path.relpath(path, ROOT)[: -len(".py")].split(os.sep)
    return ".".join(rel[:-1] if rel[-1] == "__init__" else rel)


def test_library_modules_never_import_the_cli():
    bad = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "fuzz")):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            module = _module_name(path)
            if not name.endswith(".py") or module == "fuzz.cli" or module.startswith("fuzz.cli.") \
                    or module == "fuzz.__main__":
                continue
            bad += [f"{module}: imports {m}" for m in _imported_modules(path, module)
                    if m == "fuzz.cli" or m.startswith("fuzz.cli.")]
    assert not bad, "library modules import the CLI:\n" + "\n".join(bad)


def test_the_import_check_sees_function_level_and_relative_imports(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("import os\n\ndef f():\n    from fuzz.cli import common\n    from .. import cli\n"
                    "    import fuzz.cli.run\n")
    found = list(_imported_modules(str(path), "fuzz.findings.probe"))
    assert {"fuzz.cli", "fuzz.cli.common", "fuzz.cli.run"} <= set(found)
    assert found.count("fuzz.cli") == 2  # `from fuzz.cli import ...` and `from .. import cli`


def test_every_subcommand_is_a_module_with_add_parser_and_cmd():
    import argparse

    from fuzz.cli import SUBCOMMANDS, build_parser

    def name(m):  # fuzz/cli/export_tests.py is `export-tests`
        return m.__name__.rsplit(".", 1)[1].replace("_", "-")

    names = {name(m) for m in SUBCOMMANDS}
    assert names == {"check", "run", "stats", "sanitize", "repro", "ops", "replay", "report", "triage", "shrink", "dedupe", "followup",
                     "bugs", "versions", "bench", "upstream", "export-tests"}
    for m in SUBCOMMANDS:
        sub = argparse.ArgumentParser().add_subparsers(dest="command")
        m.add_parser(sub)
        assert list(sub.choices) == [name(m)]
        assert sub.choices[name(m)].get_default("fn") is m.cmd
    assert set(build_parser()._subparsers._group_actions[0].choices) == names


def undocumented_options(parser) -> list:
    """'COMMAND OPTION' for every option and positional of every subcommand without help text, and
    'COMMAND' for a subcommand the command list gives no line."""
    import argparse

    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {a.dest: a.help for a in subparsers._choices_actions}
    missing = [name for name in subparsers.choices if not (listed.get(name) or "").strip()]
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            if not (action.help or "").strip():
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_option_of_every_subcommand_has_help_text():
    from fuzz.cli import build_parser

    assert undocumented_options(build_parser()) == []


def test_the_help_check_sees_an_option_without_help():
    from fuzz.cli import build_parser

    parser = build_parser()
    parser._subparsers._group_actions[0].choices["ops"].add_argument("--undocumented")
    assert undocumented_options(parser) == ["ops --undocumented"]


def test_ops_lists_every_op_under_a_header():
    from fuzz.program.opdb import OPS

    r = shapefuzz("ops")
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[0].split()[:3] == ["FAMILY", "OP", "ARITY"]
    n = len(list(OPS))
    assert len(lines) == n + 2 and lines[-1] == f"{n} ops"
    only = shapefuzz("ops", "--families", "matrix", "--json")
    assert {row["family"] for row in json.loads(only.stdout)} == {"matrix"}
    assert shapefuzz("ops", "--families", "nosuch").returncode == 2


def test_bench_without_torch_xla_is_bad_input():
    import importlib.util

    if importlib.util.find_spec("torch_xla") is not None:
        pytest.skip("torch_xla is installed here")
    r = shapefuzz("bench", "--count", "1")
    assert r.returncode == 2 and "needs torch_xla" in r.stderr and "Traceback" not in r.stderr


def test_shrink_fault_is_for_step_programs_only(case):
    r = shapefuzz("shrink", case(program(RELU, backend="eager")), "--fault", "cached-result")
    assert r.returncode == 2 and "step programs only" in r.stderr


@pytest.mark.parametrize("fault,timeout,outcome,needle", [
    ("segfault", "300", "crash", "SIGSEGV"), ("hang", "8", "hang", "no verdict within the time limit (8 s)")])
def test_check_judges_in_a_sandbox(case, fault, timeout, outcome, needle):
    """A compiler that kills or hangs its process is a verdict of check (exit 1), not the end of check."""
    path = case(program(RELU, sizes={"s0": [3, 9, 12]}, backend="eager"))
    r = shapefuzz("check", path, "--backend", f"fuzz.judge.faults:{fault}", "--timeout", timeout)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith(f"{path}: {outcome}") and needle in r.stdout and "Traceback" not in r.stderr
    js = shapefuzz("check", path, "--backend", f"fuzz.judge.faults:{fault}", "--timeout", timeout, "--json")
    assert js.returncode == 1 and json.loads(js.stdout)["outcome"] == outcome


def test_check_in_process_opts_out_of_the_sandbox(case):
    path = case(program(RELU, sizes={"s0": [3, 9, 12]}, backend="eager"))
    r = shapefuzz("check", path, "--backend", "fuzz.judge.faults:segfault", "--in-process")
    assert r.returncode == -11  # this process is the one that died
    ok = shapefuzz("check", path, "--in-process")
    assert ok.returncode == 0 and "ok" in ok.stdout
