"""Issue-ready reports of corpus entries: the torch.compile template's
sections, the repro inline, observed vs expected, the ablation table, the
environment, and not one word of the tool's own names."""

import argparse
import html
import json
import re

import pytest

import fuzz.findings.report.issue as report_mod
from fuzz.findings.store.corpus import Corpus
from fuzz.program.ir import RunSettings
from fuzz.cli.report import add_parser as add_report_parser
from fuzz.findings.report.issue import report_title
from fuzz.kinds import render_report, report_entry
from fuzz.judge.runner import run_case
from fuzz.findings.signature import signature
from fuzz.findings.triage import triage_entry
from fuzz.judge.verdict import Outcome, Stage, Verdict

from helpers import program

RELU = [("relu", ["x0"], {})]
PAD_RELU = [("pad", ["x0"], {"mode": "reflect", "pad": [1, 1]}), ("relu", ["v0"], {})]
INTERNAL = re.compile(r"shapefuzz|\bfuzz\b|fuzz\.|verdict", re.I)
ENV = {"torch": "2.13.0", "python": "3.12.0", "os": "Linux", "gpu": None, "triton": None}


@pytest.fixture
def toy_backends(tmp_path, monkeypatch):
    """The planted backends under a module name of their own, as a user's
    custom backend would be."""
    d = tmp_path / "mods"
    d.mkdir()
    (d / "toybackends.py").write_text("from fuzz.planted import corrupt_large, storage_error_on_pad  # noqa\n")
    monkeypatch.syspath_prepend(str(d))
    return "toybackends"


@pytest.fixture
def no_collect_env(monkeypatch):
    monkeypatch.setattr(report_mod, "collect_env_text", lambda *a, **k: None)


def record(root, ops, backend, env=None, shape=("s0",)):
    marks = ["dynamic" if d == "s0" else "static" for d in shape]
    p = program(ops, shape=shape, marks=marks, sizes={"s0": [3, 5, 12]}, backend=backend)
    v = run_case(p)
    assert v.is_finding, v.summary()
    path, _ = Corpus(root).record(p, v, signature(v, p), env=env)
    return path


def title(text):
    """The report's H1 as plain text (the report escapes it: a title holds data)."""
    return html.unescape(re.sub(r"\\(.)", r"\1", text.splitlines()[0]))


def sections(text):
    """Markdown headings, outside code blocks."""
    out, fenced = [], False
    for ln in text.splitlines():
        if ln.startswith("```"):
            fenced = not fenced
        elif ln.startswith("#") and not fenced:
            out.append(ln)
    return out


def test_report_of_a_wrong_values_finding(tmp_path, toy_backends):
    entry = record(tmp_path, RELU, f"{toy_backends}:corrupt_large")  # env captured here: collect_env is used
    text = render_report(Corpus(tmp_path).load(entry))
    assert title(text) == "# [custom backend][dynamic shapes] torch.relu on a mark_dynamic dim gives wrong values at s0=12"
    heads = sections(text)
    for h in ("### 🐛 Describe the bug", "#### Expected and actual", "### Error logs", "### Versions"):
        assert h in heads, heads
    assert "#### Ablation" not in heads  # no ablation.json yet
    # the repro inline, all but its first (docstring) line
    repro = (entry / "repro.py").read_text()
    assert repro.split("\n", 1)[1] in text and "```python" in text
    assert "torch._dynamo.mark_dynamic(x0, 0)" in text
    # expected and actual: one sentence each, the error against eager and against float64
    assert "Expected: Compiled output 0 equals eager's (rtol=atol=0.0001 for float32)" in text
    assert ("Actual: Compiled output 0 at s0=12 is up to 1 away from eager's (max abs error); against a float64 run "
            "its RMS error is 0.289, eager's 0.") in text
    assert "Why it matters: Nothing raises" in text
    assert "call 3 of the 3 calls" in text
    # environment as collect_env prints it
    versions = text.split("### Versions", 1)[1]
    assert "PyTorch version:" in versions and "Is debug build:" in versions
    assert not INTERNAL.search(text), INTERNAL.search(text)


def test_report_of_an_exception_has_its_error_log(tmp_path, toy_backends, no_collect_env):
    entry = record(tmp_path, PAD_RELU, f"{toy_backends}:storage_error_on_pad", env=ENV, shape=(2, "s0"))
    text = render_report(entry)  # an entry directory works too
    assert title(text).startswith('# [custom backend][dynamic shapes] F.pad(reflect) + torch.relu on a mark_dynamic '
                                  'dim raises RuntimeError "setStorage: sizes [2304]')
    log = text.split("### Error logs", 1)[1].split("### Versions")[0]
    assert "RuntimeError: setStorage: sizes [2304], strides [1]" in log
    assert 'File "torch/_dynamo/eval_frame.py"' in log
    assert "planted" not in log and "runner" not in log and "<" not in log
    assert "Expected: The compiled function returns what eager returns (eager runs without error)." in text
    versions = text.split("### Versions", 1)[1]
    assert "PyTorch version: 2.13.0" in versions and "Python version: 3.12.0" in versions  # env.json fallback
    assert not INTERNAL.search(text), INTERNAL.search(text)


def test_report_with_ablation_table(tmp_path, toy_backends, no_collect_env):
    entry = record(tmp_path, RELU, f"{toy_backends}:corrupt_large", env=ENV)
    triage_entry(entry)
    text = render_report(entry)
    assert "#### Ablation" in sections(text)
    table = text.split("#### Ablation", 1)[1].split("###", 1)[0]
    assert "| as found | **reproduces** |" in table
    assert '| `backend="eager"` | passes |' in table and '| `backend="inductor"` | passes |' in table
    assert "| `dynamic=False`, no dims marked dynamic | **reproduces** |" in table
    # corrupt_large fires at size > 8 whatever is dynamic: the ablation drops the [dynamic shapes] tag and the sizes
    assert title(text) == "# [custom backend] torch.relu gives wrong values"
    assert "It reproduces with static shapes too" in text
    assert not INTERNAL.search(text), INTERNAL.search(text)


def test_report_entry_writes_report_md(tmp_path, toy_backends, no_collect_env):
    entry = record(tmp_path, RELU, f"{toy_backends}:corrupt_large", env=ENV)
    text = report_entry(entry)
    assert (entry / "report.md").read_text() == text
    assert [p.name for p in entry.iterdir() if p.name.startswith(".") and p.name != ".lock"] == []
    assert Corpus(tmp_path).load(entry).key == entry.name  # the entry stays loadable


def test_planted_backend_is_named_only_by_the_repro_import(tmp_path, no_collect_env):
    entry = record(tmp_path, RELU, "fuzz.planted:corrupt_large", env=ENV)
    text = render_report(entry)
    assert "shapefuzz" not in text.lower()
    hits = [ln for ln in text.splitlines() if INTERNAL.search(ln)]
    assert hits and all("importlib.import_module('fuzz.planted')" in ln for ln in hits), hits


def test_messages_and_frames_are_scrubbed(tmp_path, no_collect_env):
    p = program(RELU, marks=["dynamic"], backend="inductor")
    v = Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.COMPILE, call=1, sizes={"s0": 9},
                exc_type="torch._inductor.exc.InductorError",
                message="AssertionError: bad index in /tmp/shapefuzz-inductor-ab12cd/xy/cxyz.py\n"
                        '  File "<shapefuzz-0123abcd4567>", line 33, in program\nfrom shapefuzz_program',
                frames=["/work/main/fuzz/runner.py:126:_run_once", "<shapefuzz-0123abcd4567>:33:program",
                        "torch/_inductor/graph.py:100:codegen", "/x/site-packages/torch/_inductor/ir.py:7:f"])
    entry, _ = Corpus(tmp_path).record(p, v, signature(v, p), env=ENV)
    text = render_report(entry)
    assert not INTERNAL.search(text), INTERNAL.search(text)
    assert title(text).startswith("# [inductor][dynamic shapes] torch.relu on a mark_dynamic dim raises InductorError")
    log = text.split("### Error logs", 1)[1]
    assert 'File "torch/_inductor/graph.py", line 100, in codegen' in log
    assert 'File "torch/_inductor/ir.py", line 7, in f' in log
    assert "torch._inductor.exc.InductorError: AssertionError: bad index in /tmp/torchinductor_cache/xy" in log
    assert 'File "repro.py", line 33, in program' in log and "from __main__" in log
    assert "while compiling at s0=9 (call 2 of the 2 calls in the repro)" in text


def test_title_phrases():
    p = program(RELU, marks=["unbacked"], backend="inductor")
    v = Verdict(outcome=Outcome.SHAPE, stage=Stage.COMPARE, call=0, sizes={"s0": 0}, where="output 0 (v0)")
    assert report_title(p, v) == ("[inductor][dynamic shapes] torch.relu on an unbacked (mark_unbacked) dim "
                                  "returns the wrong shape at s0=0")
    p = program(RELU, backend="aot_eager")
    p.settings.dynamic = True
    assert report_title(p, v) == "[aotdispatch] torch.relu returns the wrong shape"  # one call: nothing symbolic
    v.call = 1
    assert report_title(p, v).startswith("[aotdispatch][dynamic shapes] torch.relu with dynamic=True")
    assert report_title(p, v, {"backends_reproducing": ["eager"], "dynamic_shape_bug": False}) == \
        "[dynamo] torch.relu returns the wrong shape"


def test_xla_findings_use_the_pytorch_xla_layout(tmp_path, no_collect_env):
    p = program(RELU, marks=["dynamic"], backend="openxla")
    p.settings = RunSettings(backend="openxla", device="cpu")
    v = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=2, sizes={"s0": 12}, where="output 0 (v0)",
                numbers={"max_abs": 1.0, "max_rel": 2.5, "compiled_vs_fp64": 0.3, "eager_vs_fp64": 0.0})
    entry, _ = Corpus(tmp_path).record(p, v, signature(v, p), env={**ENV, "torch_xla": "2.13.0"})
    text = render_report(entry)
    heads = sections(text)
    assert title(text).startswith("# [torch_xla][dynamic shapes] torch.relu")
    assert heads[1:] == ["## 🐛 Bug", "## To Reproduce", "## Expected behavior", "## Environment",
                         "## Additional context"]
    assert " - torch_xla version: `2.13.0`" in text and "its RMS error is 0.3, eager's 0" in text


def test_cli_report(tmp_path, toy_backends, no_collect_env, capsys):
    entry = record(tmp_path, RELU, f"{toy_backends}:corrupt_large", env=ENV)
    ap = argparse.ArgumentParser()
    add_report_parser(ap.add_subparsers(dest="command"))
    args = ap.parse_args(["report", str(entry), "--no-triage"])  # the triage first: tests/test_campaign.py
    assert args.fn(args) == 0
    assert capsys.readouterr().out.startswith("# \\[custom backend\\]") and not (entry / "report.md").exists()
    args = ap.parse_args(["report", str(entry), "--write", "--no-triage"])
    assert args.fn(args) == 0
    assert (entry / "report.md").read_text() == capsys.readouterr().out
    (entry / "verdict.json").write_text(json.dumps({"outcome": "nonsense"}))
    args = ap.parse_args(["report", str(entry)])
    assert args.fn(args) == 2
    assert "verdict.json" in capsys.readouterr().err


def test_a_cuda_report_whose_repro_is_its_cpu_twin_says_where_the_repro_runs():
    """corpus/dd2d863bbc57 (CUDA, untriaged; `versions` found its CPU twin failing as found) ships a CPU
    repro.py: its description says so, read from the twin's record as the repro was written."""
    from pathlib import Path

    from fuzz.findings.report.issue import compiled_parts

    root = Path(__file__).resolve().parent.parent / "corpus"
    entry = Corpus(root).load(root / "dd2d863bbc57")
    assert not (entry.path / "ablation.json").exists()
    assert "cuda" not in (entry.path / "repro.py").read_text().split('"""')[2]  # the code, past the docstring
    assert "on CUDA (and on CPU, where the repro below runs)" in compiled_parts(entry)["description"]
