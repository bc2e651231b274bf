"""`shapefuzz report ENTRY --trace`: a TORCH_TRACE of the entry's repro.

Upstream asks for a structured trace (and tlparse's summary of it) on
torch.compile bugs. This runs the short repro the entry's program generates
(written afresh, as replay does: no stored file runs), or its full harness
where it has no short form, in a fresh process with empty compile caches
and TORCH_TRACE set, and keeps the trace under ENTRY/trace/. Where `tlparse`
is installed, its HTML summary goes to ENTRY/trace/tlparse/ and the report
says how many compiles it shows; else the report says how to make one.
ENTRY/trace/trace.json records what ran, which the report reads.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

TRACE_DIR = "trace"
RECORD = "trace.json"
TLPARSE_TIMEOUT = 300.0


class TraceError(Exception):
    """No trace could be made; the message says why."""


def collect_trace(entry_dir, *, timeout: float = 600.0, tlparse: str | None = None) -> dict:
    """Run the entry's repro with TORCH_TRACE into ENTRY/trace/ (replacing an
    older trace), summarise it with tlparse when there is one (`tlparse`: its
    path; default: the one on PATH), and return the record written to
    ENTRY/trace/trace.json."""
    from fuzz.findings.store.corpus import Corpus
    from fuzz.findings.store.scripts import entry_repro, entry_scripts, program_digest
    from fuzz.judge.backends import not_allowed
    from fuzz.judge.isolated import run_script
    from fuzz.program.ir import Program

    from fuzz.findings.store.corpus_files import entry_inside

    d = entry_inside(entry_dir)  # a real entry dir inside its corpus: the trace is written there
    entry = Corpus(d.parent).load(d)
    if not isinstance(entry.program, Program):
        raise TraceError("a TORCH_TRACE is for torch.compile entries; a torch_xla entry has none")
    why = not_allowed(entry.program.settings.backend) or _missing(entry.program)
    if why:
        raise TraceError(why)
    scripts, updates = entry_scripts(entry.program, entry.verdict, entry.signature)
    short = "lines" in (updates.get("short_repro") or {})
    script = scripts["repro.py"] if short else entry_repro(entry.program, entry.signature)[0]
    with tempfile.TemporaryDirectory(prefix="shapefuzz-trace-") as work:
        w = Path(work)
        rc, _, err = run_script(script, timeout=timeout, force={"TORCH_TRACE": str(w / "trace")}, work=w)
        logs = sorted((w / "trace").glob("*.log")) if (w / "trace").is_dir() else []
        if not logs:
            raise TraceError(f"the repro wrote no trace (exit {rc}): " + " / ".join(err.strip().splitlines()[-3:]))
        staged = Path(tempfile.mkdtemp(prefix=".trace-", dir=d))
        for f in logs:
            shutil.copyfile(f, staged / f.name)
    record = {"at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "program": program_digest(entry.program),
              "script": "short repro" if short else "harness", "exit": rc, "files": [f.name for f in logs],
              "bytes": sum((staged / f.name).stat().st_size for f in logs), "torch": _torch()}
    # on PATH, or beside this Python (a virtualenv's bin/ that is not on PATH)
    exe = tlparse or shutil.which("tlparse") or shutil.which("tlparse", path=str(Path(sys.executable).parent))
    record["tlparse"] = _tlparse(exe, staged, logs[0].name)
    (staged / RECORD).write_text(json.dumps(record, indent=1) + "\n")
    dest = d / TRACE_DIR
    old = d / f".trace-old-{staged.name}"
    if dest.exists():
        dest.rename(old)
    staged.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    return record


def _missing(program) -> str | None:
    from fuzz.devices import missing

    return missing(program.settings.device)


def _torch() -> str:
    import torch

    return torch.__version__


def _tlparse(exe: str | None, d: Path, log: str) -> dict:
    """tlparse's summary of trace `log` in d/tlparse/: {"html": path, "compiles": [ids]}, or
    {"missing": how to make one} / {"error": why not}."""
    if not exe:
        return {"missing": f"`pip install tlparse`, then `tlparse {TRACE_DIR}/{log}`"}
    try:
        r = subprocess.run([exe, str(d / log), "-o", str(d / "tlparse"), "--overwrite", "--no-browser"],
                           capture_output=True, text=True, timeout=TLPARSE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"tlparse did not run: {e}"}
    from fuzz.datafile import DataFileError, read_json

    try:  # tlparse's output, in a dir of our own making: read as any data file all the same
        compiles = read_json(d / "tlparse" / "compile_directory.json", 16_000_000, follow_symlinks=False)
    except DataFileError:
        return {"error": f"tlparse exited {r.returncode} without its compile directory: {r.stderr.strip()[-300:]}"}
    ids = [k for k in compiles if isinstance(k, str) and k != "[-/-]"] if isinstance(compiles, dict) else []
    return {"html": f"{TRACE_DIR}/tlparse/index.html", "compiles": ids}


def trace_text(entry) -> str | None:
    """The report's paragraph on ENTRY/trace/ (None when there is no trace of
    the entry's program as it is now)."""
    from fuzz.findings.store.scripts import program_digest

    from fuzz.datafile import DataFileError, loads
    from fuzz.findings.store.corpus_files import read_stored_text

    path = Path(entry.path) / TRACE_DIR / RECORD
    try:
        rec = loads(read_stored_text(path, "trace.json")) if path.exists() else None
    except DataFileError:
        return None
    if not isinstance(rec, dict) or rec.get("program") != program_digest(entry.program):
        return None
    # a corpus comes from other people: only fields of the shapes this module writes reach the report
    names = [f for f in rec.get("files") or [] if isinstance(f, str) and re.fullmatch(r"[\w.-]{1,120}", f)]
    torch = rec.get("torch") if isinstance(rec.get("torch"), str) and re.fullmatch(r"[\w.+-]{1,40}", rec["torch"]) \
        else "?"
    size = rec.get("bytes") if isinstance(rec.get("bytes"), int) else 0
    if not names:
        return None
    files = ", ".join(f"`{TRACE_DIR}/{f}`" for f in names[:3])
    script = "harness" if rec.get("script") == "harness" else "short repro"
    text = f"A `TORCH_TRACE` of the {script} (torch {torch}, {size // 1024} KB) is attached: {files}."
    tl = rec.get("tlparse") if isinstance(rec.get("tlparse"), dict) else {}
    if tl.get("html"):
        ids = [i for i in tl.get("compiles") or [] if isinstance(i, str) and re.fullmatch(r"\[[\w/-]{1,20}\]", i)]
        text += (f" tlparse's summary, `{TRACE_DIR}/tlparse/index.html`, shows {len(ids)} compile(s)"
                 + (f" ({', '.join(ids[:6])})" if ids else "") + ".")
    else:
        text += f" For tlparse's summary: `pip install tlparse`, then `tlparse {TRACE_DIR}/{names[0]}`."
    return text
