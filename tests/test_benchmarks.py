"""The tools' layout: scripts/ holds what a user runs, each named in README.md or docs/; the one-off measurements
are benchmarks/, each run by name (`python -m benchmarks NAME`) and listed in benchmarks/README.md."""

import re
import subprocess
import sys
from pathlib import Path

from benchmarks.__main__ import benchmarks, command, summary

ROOT = Path(__file__).resolve().parent.parent


def test_scripts_holds_few_tools_and_the_docs_name_each():
    names = sorted(p.name for p in (ROOT / "scripts").iterdir() if p.is_file())
    docs = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    assert len(names) <= 12, names
    assert [n for n in names if n not in docs] == []


def test_every_benchmark_is_in_the_readme_table_and_every_row_is_a_benchmark():
    rows = re.findall(r"^\| `([a-z0-9_]+)` \|", (ROOT / "benchmarks" / "README.md").read_text(), re.M)
    assert sorted(rows) == sorted(benchmarks())
    assert all(summary(p) for p in benchmarks().values())  # `python -m benchmarks list` says what each is


def test_a_name_runs_its_script_with_the_checkout_on_the_path():
    py, env = command("one_entry", ["--cases", "3"])
    assert py == [sys.executable, str(ROOT / "benchmarks" / "one_entry.py"), "--cases", "3"]
    assert env["PYTHONPATH"].split(":")[0] == str(ROOT)
    assert command("gpu_campaign", ["OUT"])[0] == ["bash", str(ROOT / "benchmarks" / "gpu_campaign.sh"), "OUT"]


def test_the_driver_runs_a_benchmark_and_refuses_an_unknown_name(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)

    listed = run("list")
    assert listed.returncode == 0 and all(f"  {name} " in listed.stdout for name in benchmarks())
    unknown = run("no_such_benchmark")
    assert unknown.returncode == 2 and "no benchmark named 'no_such_benchmark'" in unknown.stderr
    # a shell benchmark given no arguments stops at its usage line, before it does anything
    usage = run("check_repros")
    assert usage.returncode != 0 and "usage: check_repros.sh OUT [CORPUS]" in usage.stderr
