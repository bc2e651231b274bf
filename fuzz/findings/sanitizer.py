"""Re-run a memory-error finding under compute-sanitizer (when it is
installed) and keep its first report in the corpus entry.

What runs is the full judging harness generated from the entry's validated
program, written afresh to a scratch dir, as replay does: never a file the
entry stores."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

# Findings worth a sanitizer run: storage bounds and device memory faults.
PATTERNS = (r"setStorage", r"out of bounds", r"illegal memory access", r"misaligned address",
            r"device-side assert", r"unspecified launch failure")


def wants_sanitizer(message: str) -> bool:
    return any(re.search(p, message or "") for p in PATTERNS)


def find_sanitizer() -> str | None:
    return shutil.which("compute-sanitizer") or next(
        (p for p in ("/usr/local/cuda/bin/compute-sanitizer",) if os.path.exists(p)), None)


def first_report(output: str) -> str:
    """The first ========= block compute-sanitizer printed."""
    lines = [l for l in output.splitlines() if l.startswith("=========")]
    block = []
    for l in lines:
        if block and re.match(r"=========\s*$", l):
            break
        block.append(l)
    return "\n".join(block[:60])


def sanitize_entry(entry_dir: str, timeout: float = 600.0) -> str | None:
    """Write sanitizer.txt into the entry; returns its text, or None when the
    tool is absent. CorpusError for an entry that cannot be read. A program
    naming a module:attr backend imports it: callers that did not choose the
    backend check fuzz.judge.backends.not_allowed first."""
    from fuzz.findings.store.corpus import Corpus
    from fuzz.findings.store.scripts import entry_repro
    from fuzz.judge.isolated import run_command, scratch_env

    exe = find_sanitizer()
    if not exe:
        return None
    d = Path(entry_dir)
    entry = Corpus(d.parent).load(d)
    harness, error = entry_repro(entry.program, entry.signature)
    if error:
        text = f"(no harness to run: {error})"
    else:
        with tempfile.TemporaryDirectory(prefix="shapefuzz-sanitize-") as work:
            (Path(work) / "repro.py").write_text(harness)
            rc, out, err = run_command([exe, "--tool", "memcheck", "--print-limit", "1", sys.executable, "repro.py"],
                                       timeout=timeout, env=scratch_env(work), cwd=work)
        text = (f"(compute-sanitizer timed out after {timeout:.0f} s)" if rc is None else
                first_report(out + err) or f"(no report; exit {rc})")
    write_report(entry_dir, text)
    return text


def write_report(entry_dir: str, text: str) -> None:
    """sanitizer.txt of an entry (also where a run made elsewhere lands: fuzz/campaign/cluster/followups.py)."""
    from fuzz.files import write_atomic
    from fuzz.findings.store.corpus_files import entry_inside

    # a real entry dir inside its corpus, never a symlink's target; a temp file of its own, replaced into place
    write_atomic(entry_inside(entry_dir) / "sanitizer.txt", text + "\n")
