"""An entry's repro.py on disk: rewritten from its program, its short form
checked standalone, and older entries migrated.

What repro.py holds is fuzz/findings/store/scripts.py's to say. Nothing here runs a
stored file: the standalone check runs the short form the validated program
generates, and only while the stored repro.py is that very script. Every
write holds the entry's lock and drops the harness.py older entries stored.
"""

from __future__ import annotations

from pathlib import Path

from fuzz.findings.store.corpus import HARNESS, Corpus, _locked, _now, _store_scripts, capture_env
from fuzz.findings.store.scripts import _apply_meta, entry_repro_device, entry_scripts, harness_note, settled_scripts
from fuzz.files import dumps as _dumps
from fuzz.files import write_atomic as _write_atomic


def _stored_repro(d: Path) -> str | None:
    """The entry's repro.py as stored (read through the one loader), None when it cannot be read."""
    from fuzz.findings.store.corpus_files import CorpusFileError, read_stored_text

    try:
        return read_stored_text(d / "repro.py")
    except CorpusFileError:
        return None


def rewrite_scripts(corpus: Corpus, entry_dir, keep_check: bool = True) -> dict:
    """Write the entry's repro.py anew from its program and verdict (as this
    shapefuzz generates them; a stored harness.py goes); returns meta's
    "short_repro". keep_check: the very same short form keeps its last check
    (passed or not); False forgets it, for a check to be made again."""
    d = Path(entry_dir)
    with _locked(d):
        entry = corpus.load(d)
        scripts, updates, _ = settled_scripts(entry.program, entry.verdict, entry.signature, entry.meta, keep_check,
                                              entry_repro_device(d, entry.program))
        _store_scripts(d, scripts)
        meta = _apply_meta(dict(entry.meta), updates)
        _write_atomic(d / "meta.json", _dumps(meta))
        return meta.get("short_repro") or {}


def drop_stored_harness(corpus: Corpus, entry_dir) -> list[str]:
    """Migrate an entry made when entries stored their full harness: harness.py
    goes, and so does a repro.py that was a copy of it, replaced by what the
    entry holds now where it has no short form (the note on the harness; a
    torch_xla entry: its harness, as generated now). A short repro is left as
    it is (replay notes a stale one; `shapefuzz repro ENTRY` rewrites it).
    Returns what changed, one phrase per file."""
    d = Path(entry_dir)
    with _locked(d):
        entry = corpus.load(d)
        scripts, _, short = settled_scripts(entry.program, entry.verdict, entry.signature, entry.meta,
                                            device=entry_repro_device(d, entry.program))
        changed = [f"{HARNESS} removed"] if (d / HARNESS).exists() else []
        if not short and _stored_repro(d) != scripts["repro.py"]:
            changed.append("repro.py rewritten")
            _write_atomic(d / "repro.py", scripts["repro.py"])
        (d / HARNESS).unlink(missing_ok=True)
        return changed


def check_repro(corpus: Corpus, entry_dir, *, timeout: float = 600.0) -> dict:
    """Run the entry's short repro standalone in a fresh process (unless this very script ran before): it must
    fail as the entry's verdict did. What runs is the short form its program generates, never the stored file;
    it is checked only while the stored repro.py is that very script. The answer goes under meta.json's
    "short_repro" (checked: when, reproduces, what it showed, the torch that ran it); a short form that does not
    reproduce is replaced by the note on the harness (scripts.harness_note), and the entry says why. Entries
    without a short form, or whose device or stack this machine lacks, are left as they are; so is one whose
    repro.py a merge replaced while the check ran. Returns "short_repro"."""
    from fuzz.devices import missing as missing_device
    from fuzz.program.short_repro import check_short_repro

    d = Path(entry_dir)
    entry = corpus.load(d)
    info = entry.meta.get("short_repro")
    info = dict(info) if isinstance(info, dict) else {}
    if "lines" not in info or info.get("checked"):
        return info  # no short form, or this very script was run already
    device = entry_repro_device(d, entry.program)  # CPU where the triage reproduced it there
    scripts, updates = entry_scripts(entry.program, entry.verdict, entry.signature, device)
    script = scripts["repro.py"]
    if updates["short_repro"].get("script") != info.get("script") or _stored_repro(d) != script:
        return info  # repro.py is not the short form its program generates (`shapefuzz repro ENTRY` rewrites it)
    missing = missing_device(device or entry.program.settings.device)  # a short form is of a compiled program
    if missing:
        return {**info, "not_checked": missing}
    ok, shown, seconds = check_short_repro(script, entry.verdict, timeout=timeout)
    with _locked(d):
        entry = corpus.load(d)
        if _stored_repro(d) != script:  # its new form is checked by the merge's own settle
            return dict(entry.meta.get("short_repro") or {})
        info.update(checked=_now(), reproduces=ok, shown=shown, seconds=round(seconds, 1),
                    torch=capture_env().get("torch"))
        if not ok:
            info["full_harness"] = f"the short form did not fail as the finding did: {shown}"
            info.pop("lines", None)
            _store_scripts(d, {"repro.py": harness_note(entry.signature, info["full_harness"])})
        meta = dict(entry.meta)
        meta["short_repro"] = info
        _write_atomic(d / "meta.json", _dumps(meta))
    return info
