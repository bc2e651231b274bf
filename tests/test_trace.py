"""`shapefuzz report ENTRY --trace` (fuzz/findings/report/trace.py): a TORCH_TRACE of
the entry's repro under ENTRY/trace/, tlparse's summary where it is
installed, and the report's paragraph on it."""

import json
import shutil
from pathlib import Path

import pytest

from fuzz.findings.store.corpus import Corpus
from fuzz.findings.report.issue import render_compiled
from fuzz.findings.report.trace import TRACE_DIR, TraceError, collect_trace, trace_text

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def entry(tmp_path):
    """A CPU entry of a planted bug: it fails on every torch release (a shipped one may be fixed in the next)."""
    from fuzz.findings.signature import minimal_signature
    from fuzz.judge.runner import run_case

    from helpers import program

    p = program([("relu", ["x0"], {})], marks=["dynamic"], backend="fuzz.planted:corrupt_large")
    v = run_case(p)
    return Corpus(tmp_path / "c").record(p, v, minimal_signature(v, p))[0]


def test_report_trace_collects_a_torch_trace_and_tlparse_summarises_it(entry):
    tlparse = shutil.which("tlparse") or shutil.which("tlparse", path=str(Path(__import__("sys").executable).parent))
    if not tlparse:
        pytest.skip("tlparse is not installed (the test extra installs it)")
    rec = collect_trace(entry, timeout=300)
    assert rec["exit"] == 1 and rec["script"] == "short repro"  # the repro still fails, traced
    logs = [entry / TRACE_DIR / f for f in rec["files"]]
    assert logs and all(f.stat().st_size > 1000 for f in logs)
    assert (entry / TRACE_DIR / "tlparse" / "index.html").is_file() and rec["tlparse"]["compiles"]
    e = Corpus(entry.parent).load(entry)
    text = render_compiled(e)
    assert "#### Trace" in text and f"trace/{rec['files'][0]}" in text and "tlparse/index.html" in text


def test_without_tlparse_the_report_says_how_to_summarise_the_trace(entry):
    rec = collect_trace(entry, timeout=300, tlparse=str(entry / "no-such-tlparse"))
    assert "error" in rec["tlparse"]
    e = Corpus(entry.parent).load(entry)
    assert f"`tlparse trace/{rec['files'][0]}`" in trace_text(e)
    # a trace of another program is not described
    record = entry / TRACE_DIR / "trace.json"
    doc = json.loads(record.read_text())
    record.write_text(json.dumps({**doc, "program": "0" * 12}))
    assert trace_text(e) is None
    # nor are fields of other shapes (a corpus is other people's data)
    record.write_text(json.dumps({**doc, "files": ["x`); import os #"], "torch": "<b>"}))
    assert trace_text(e) is None


def test_a_torch_xla_entry_or_an_unallowed_backend_has_no_trace(tmp_path, entry):
    xla = next(d for d in sorted((ROOT / "corpus").iterdir()) if (d / "program.json").is_file()
               and "blocks" in json.loads((d / "program.json").read_text()))
    shutil.copytree(xla, tmp_path / xla.name, ignore=shutil.ignore_patterns(".lock"))
    with pytest.raises(TraceError, match="torch_xla"):
        collect_trace(tmp_path / xla.name)
    d = entry
    p = json.loads((d / "program.json").read_text())
    p["settings"]["backend"] = "os:system"
    (d / "program.json").write_text(json.dumps(p))
    with pytest.raises(TraceError, match="os"):
        collect_trace(d)
    assert not (d / TRACE_DIR).exists()
