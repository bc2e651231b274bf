"""Is a finding a bug on its own, in a fresh process?

A campaign judges each program in a worker that has compiled many programs
before it. A verdict that needs that history (a cached pad_mm or autotuning
decision, a graph an earlier case left behind) is no bug anyone can file:
upstream needs a script that fails when run alone.

So when an entry's short repro does not fail standalone, or its shrink could
not reproduce it, its full harness runs once more in a fresh process with
empty compile caches. If that passes too, the entry is set aside under
CORPUS/unconfirmed/<key>: kept whole (nothing is lost) and still counted when
a campaign hits it again (the index sends its keys there, so it is not shrunk
again), but no longer a corpus entry: `bugs`, `replay`, `repro` and the
campaign's distinct-bug count pass it by.
"""

from __future__ import annotations

from pathlib import Path

from fuzz.findings.store.corpus import UNCONFIRMED, Corpus, _now


def run_harness(entry, *, timeout: float = 600.0) -> tuple[bool | None, str]:
    """Run the harness `entry`'s program generates (never a stored file) in a
    fresh process, in a scratch dir with its own Inductor and Triton caches:
    (True: it fails, False: compiled and eager agree, None: no answer), and
    what it showed."""
    from fuzz.findings.replay import FAIL_LINES, OK_LINES
    from fuzz.findings.store.scripts import entry_repro
    from fuzz.judge.isolated import EXIT_SKIP, run_script, tail
    from fuzz.judge.verdict import Outcome

    harness, _ = entry_repro(entry.program, entry.signature)
    recorded = entry.verdict.outcome
    rc, out, err = run_script(harness, timeout=timeout,
                              accept=lambda rc, out, err: _harness_fails(rc, out, recorded, FAIL_LINES))
    if rc is None:
        return (True, "it hung again") if recorded is Outcome.HANG else (None, f"it ran past {timeout:g} s")
    if rc == EXIT_SKIP:
        return None, tail(err, 1) or "this machine lacks its device or stack"
    if rc == 0 and any(line in out for line in OK_LINES):
        return False, tail(out, 1)
    if _harness_fails(rc, out, recorded, FAIL_LINES):
        return True, tail(out, 1) or f"exit {rc}"
    return None, f"exit {rc}: {tail(err, 3) or tail(out, 3)}"


def _harness_fails(rc, out: str, recorded, fail_lines) -> bool:
    from fuzz.judge.verdict import Outcome

    if rc is None:
        return recorded is Outcome.HANG
    return rc == 1 and any(line in out for line in fail_lines) or rc < 0 and recorded is Outcome.CRASH


def set_aside(corpus: Corpus, entry_dir) -> Path:
    """Move an entry to CORPUS/unconfirmed/<key>, pointing its keys there;
    returns where it is now."""
    return corpus.move_aside(entry_dir, UNCONFIRMED)


def confirm(corpus: Corpus, entry_dir, *, timeout: float = 600.0) -> tuple[Path, dict]:
    """Run the entry's harness standalone (run_harness), note the answer in
    meta.json "standalone", and set the entry aside when it passes; returns
    (where the entry is now, the note)."""
    import torch

    from fuzz.findings.store.scripts import program_digest
    from fuzz.kinds import kind_of

    d = Path(entry_dir)
    entry = corpus.load(d)
    digest = program_digest(entry.program)
    last = entry.meta.get("standalone") or {}
    if last.get("program") == digest and last.get("reproduces") is not None:
        return d, last  # this very program was run alone before
    missing = kind_of(entry.program).unavailable(entry.program)
    if missing:
        return d, {"not_checked": missing}
    fails, shown = run_harness(entry, timeout=timeout)
    if program_digest(corpus.load(d).program) != digest:  # a merge made another program its own meanwhile
        return d, {"not_checked": "the entry's program changed while its harness ran"}
    note = {"checked": _now(), "reproduces": fails, "shown": shown[:600], "torch": torch.__version__,
            "program": digest}
    corpus.set_meta(d, "standalone", note)
    if fails is False:
        d = set_aside(corpus, d)
    return d, note


def unconfirmed(corpus_root) -> list[Path]:
    """The set-aside entries of a corpus."""
    root = Path(corpus_root) / UNCONFIRMED
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []

