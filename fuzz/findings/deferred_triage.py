"""The triage of a campaign's entries, deferred until someone asks for the filing output.

A triage (fuzz/findings/triage.py) costs a compile per row: on a GPU box it was the larger half of a
new entry's follow-up CPU (73 of 124 CPU-s at the median), spent on every entry, though
most are merged, set aside, known upstream or never filed. What it adds is for the filer: the
report's ablation table and the title's "needs option X" and "also with static shapes", BUGS.md's
titles, a CPU short repro for a CUDA finding that fails on CPU too. So a campaign shrinks its new
entries and triages none (`shapefuzz run --triage` still does); `shapefuzz report ENTRY` triages
the entry first, `shapefuzz bugs --triage` each bug's entry, and where neither can (a device this
machine lacks, or --no-triage) the command says so and names the command that does.

Nothing else reads the ablation to decide: the short repro's check, `versions`, replay and the
campaign's counts work the same with or without it.
"""

from __future__ import annotations

from pathlib import Path


def untriaged(entry) -> str | None:
    """Why the corpus Entry needs a triage before its report -- it has no ablation, or the ablation
    is of another program than the entry's now (a merge made a smaller variant its program) -- or
    None when it has one of its program, or its kind has no triage."""
    from fuzz.findings.triage import load_ablation
    from fuzz.kinds import kind_of

    if kind_of(entry.program).triage:
        return None
    doc = load_ablation(entry.path)
    if doc is None:
        return "it was not triaged (a campaign defers the triage until the report)"
    if doc.get("program") != entry.program.to_dict():
        return "its ablation is of an earlier program (the entry's program changed since)"
    return None


def cannot_triage_here(entry) -> str | None:
    """Why this machine cannot triage the entry (its backend does not load, its device or stack is missing),
    or None: every row would fail, and an ablation of those failures would say nothing of the bug."""
    from fuzz.judge.backends import BackendError, check
    from fuzz.kinds import kind_of

    kind = kind_of(entry.program)
    try:
        check(*kind.runs_on(entry.program))
    except BackendError as e:
        return str(e)
    return kind.unavailable(entry.program, retarget=False)


def how_to_triage(entry_dir) -> str:
    return f"`shapefuzz triage {entry_dir}` (or `shapefuzz report {entry_dir}`, which triages first)"


def _no_ablation(d: Path, why: str) -> str:
    return f"{d.name}: no ablation of its program in the report, since {why}"


def untriaged_line(entry_dir) -> str | None:
    """What `report --no-triage` says of an entry it leaves untriaged (and how to triage it), or None."""
    from fuzz.findings.store.corpus import Corpus

    d = Path(entry_dir)
    why = untriaged(Corpus(d.parent).load(d))
    return f"{_no_ablation(d, why)} (--no-triage); {how_to_triage(d)} makes it" if why else None


def triage_if_needed(entry_dir, *, timeout: float = 300.0, log=None) -> str | None:
    """Triage the entry at `entry_dir` when it needs it (untriaged) and this machine can; returns
    None when its ablation is of its program now (made here or before), else a line saying why it
    has none and how to make it. `log`: told before a triage starts (it takes minutes)."""
    from fuzz.findings.store.corpus import Corpus
    from fuzz.findings.triage import triage_entry

    d = Path(entry_dir)
    entry = Corpus(d.parent).load(d)
    why = untriaged(entry)
    if why is None:
        return None
    missing = cannot_triage_here(entry)
    if missing:
        return f"{_no_ablation(d, why)}, and this machine cannot triage it ({missing}); run {how_to_triage(d)} " \
               "where it can"
    if log:
        log(f"{d.name}: triaging it first, since {why} (backends, devices, static shapes, the options it set)")
    triage_entry(d, timeout=timeout)
    return None
