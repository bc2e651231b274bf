"""One bug, one corpus entry: shrink, re-key by the minimal signature, merge.

An entry is made under its finding's provisional signature. `settle(corpus,
entry)` finishes it: shrinks it unless it is shrunk (trying first the minimal
programs of the entries the corpus already holds for that kind of finding,
fuzz/findings/shrink/onto.py, which is what makes the hundredth program of a
known bug cheap; not at all when its minimal key needs no shrink,
signature.settled_signature, and the corpus holds that entry already),
computes the minimal signature of the shrunk program, and
moves the entry there, merged with whatever entry has that key already
(Corpus.rekey). The campaign's follow-up jobs settle each new entry;
`shapefuzz dedupe CORPUS` settles a whole corpus (`plan` with write=False:
the merges it would make, nothing written).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fuzz.findings.store.corpus import HARNESS, Corpus, CorpusError, Entry
from fuzz.findings.store.repro_files import check_repro, drop_stored_harness
from fuzz.findings.shrink.entry import DEFAULT_RERUNS
from fuzz.findings.signature import minimal_signature, outcome_class, settled_signature
from fuzz.findings.standalone import UNCONFIRMED, confirm, unconfirmed
from fuzz.kinds import kind_of, report_entry


@dataclass
class Settlement:
    source: str  # the entry's key before
    key: str | None = None  # its minimal key (None: it could not be shrunk)
    path: Path | None = None  # where the entry is now
    merged: bool = False  # into an entry that was there already (or, planned, with another one)
    shrunk_now: bool = False  # this call shrank it
    onto: str | None = None  # the shrink settled on this known minimal form
    evaluations: int = 0
    reason: str = ""  # why it stays as it is, when it does
    set_aside: bool = False  # it did not fail alone in a fresh process: moved to unconfirmed/ (standalone.py)
    known: object = None  # the reference corpus's row its cause belongs to: moved to known/ (reference.py)
    program: object = field(default=None, repr=False)  # the minimal program (key's), when there is one
    verdict: object = field(default=None, repr=False)  # its verdict

    def line(self) -> str:
        if self.known is not None:
            return f"{self.source}: its cause is in the reference corpus, row {self.known.text()}: set aside in known/"
        if self.set_aside:
            return f"{self.source}: set aside in {UNCONFIRMED}/ ({self.reason})"
        if self.key is None:
            return f"{self.source}: left as it is ({self.reason})"
        if self.key == self.source:
            return f"{self.source}: minimal already"
        how = "merged into" if self.merged else "re-keyed to"
        extra = f"; shrunk ({self.evaluations} evaluations{', onto a known form' if self.onto else ''})" \
            if self.shrunk_now else ""
        return f"{self.source} -> {how} {self.key}{extra}"


def known_forms(corpus: Corpus, entry: Entry, extra: list | None = None) -> list[tuple[str, object]]:
    """(minimal key, program) of the re-keyed entries `entry` could turn out to
    be: the same kind of program, outcome and device type; most hits first.
    `extra`: (key, program, verdict) of forms found but not written (a dry run)."""
    def like(key, program, verdict) -> bool:
        return (program is not None and key != entry.key
                and outcome_class(verdict) == outcome_class(entry.verdict)
                and type(program) is type(entry.program) and program.device_type() == entry.program.device_type())

    from fuzz.findings.reference import reference_of

    try:
        ref = reference_of(corpus.root)
    except CorpusError:
        ref = None
    held = list(corpus.entries()) + (list(Corpus(ref.root).entries()) if ref is not None else [])
    forms = sorted((e for e in held if e.minimal and like(e.key, e.program, e.verdict)), key=lambda e: -e.hits)
    out = list({e.key: (e.key, e.program) for e in forms}.values())
    return out + [(k, p) for k, p, v in (extra or []) if like(k, p, v) and k not in {x for x, _ in out}]


def _to_reference(corpus: Corpus, out: Settlement, log) -> bool:
    """Set the settled entry aside in known/ when its cause is in the corpus's reference corpus
    (fuzz/findings/reference.py): no standalone checks or report for it. True when it was."""
    from fuzz.findings.store.corpus_files import CorpusFileError
    from fuzz.findings.reference import reference_of, set_known

    try:
        ref = reference_of(corpus.root)
        row = ref.for_entry(corpus.load(out.path)) if ref is not None else None
    except (CorpusError, CorpusFileError) as e:
        if log:
            log(f"{out.path.name}: the reference corpus is not read: {e}")
        return False
    if row is None:
        return False
    out.path, out.known = set_known(corpus, out.path, row), row
    return True


def _confirm(corpus: Corpus, out: Settlement, path: Path, timeout: float, log) -> bool:
    """Run the entry's harness alone in a fresh process; set it aside when it
    passes (fuzz/findings/standalone.py). True when it was set aside."""
    try:
        out.path, note = confirm(corpus, path, timeout=timeout)
    except (OSError, CorpusError) as e:
        if log:
            log(f"{path.name} not checked standalone: {e}")
        return False
    if note.get("reproduces") is False:
        out.set_aside, out.key = True, None
        out.reason += f"; its harness passes alone in a fresh process ({note.get('shown', '')[:120]})"
        return True
    return False


def _check_standalone(corpus: Corpus, out: Settlement, timeout: float, log) -> bool:
    """The last step: the short repro must fail standalone as the finding did;
    when it does not, the whole harness runs alone (_confirm). True when the
    entry was set aside."""
    try:
        info = check_repro(corpus, out.path, timeout=timeout)
    except (OSError, CorpusError) as e:
        info = {}
        if log:
            log(f"short repro of {out.path.name} not checked: {e}")
    if info.get("reproduces") is not False:
        return False
    out.reason = "its short repro passes standalone"
    return _confirm(corpus, out, out.path, timeout, log)


def settle(corpus: Corpus, entry_dir, *, time_budget: float = 300.0, timeout: float = 300.0,
           reruns: int = DEFAULT_RERUNS, reshrink: bool = False, write: bool = True, extra_forms: list | None = None,
           log: Callable[[str], None] | None = None, shrinker: Callable | None = None) -> Settlement:
    """Shrink the entry unless it is shrunk already (`reshrink`: shrink an
    entry shrunk but not re-keyed again, e.g. by an older shrinker), then
    re-key it by its minimal signature, merging (`write`=False: compute the
    key, write nothing). `shrinker`: what shrinks the entry instead of its
    kind's shrink_entry, with its arguments (a Ray cluster's:
    fuzz/campaign/cluster/followups.py). Raises CorpusError for an unreadable entry."""
    entry = corpus.load(entry_dir)
    out = Settlement(source=entry.key)
    if entry.minimal and not reshrink:
        out.key, out.path, out.program, out.verdict = entry.key, entry.path, entry.program, entry.verdict
        sig = minimal_signature(entry.verdict, entry.program)
        if sig.key != entry.key:  # keyed by an older bucketing (signature.VERSION): re-key it, merging
            out.key, out.merged = sig.key, corpus.path_of(sig.key).is_dir()
            if write:
                out.path = corpus.rekey(entry.path, sig, size=kind_of(entry.program).size)
        if write and not _to_reference(corpus, out, log):  # a settle cut short after its re-key has its
            _check_standalone(corpus, out, timeout, log)  # standalone checks still to do
        return out
    program, verdict = entry.program, entry.verdict
    kind = kind_of(program)
    settled = settled_signature(verdict, program)
    if settled is not None and not reshrink and settled.key != entry.key and corpus.path_of(settled.key).is_dir():
        out.reason = "its minimal key needs no shrink and the corpus holds it: merged as it is"
    elif not entry.shrunk or reshrink:
        missing = kind.unavailable(program, retarget=False)
        if missing:  # e.g. a CUDA entry on a CPU machine: unknown here, not "does not reproduce"
            out.reason = f"cannot be checked here: {missing}"
            return out
        forms = known_forms(corpus, entry, extra_forms)
        try:
            res = (shrinker or kind.shrink_entry)(entry.path, time_budget=time_budget, reruns=reruns, write=write,
                                                  timeout=timeout, onto=forms, log=log)
        except ValueError as e:  # a step program that no longer reproduces, ...
            out.reason = str(e)
            return out
        out.shrunk_now, out.onto, out.evaluations = True, getattr(res, "onto", None), res.evaluations
        if not res.reproduced or res.verdict is None:
            out.reason = "does not reproduce"
            if write:
                _confirm(corpus, out, entry.path, timeout, log)
            return out
        program, verdict = res.program, res.verdict
    sig = minimal_signature(verdict, program)
    out.key, out.program, out.verdict = sig.key, program, verdict
    target = corpus.path_of(sig.key)
    out.merged = target.is_dir() and target != entry.path
    if not write:
        out.path = entry.path
        return out
    had_report = (entry.path / "report.md").is_file()
    out.path = corpus.rekey(entry.path, sig, size=kind.size)
    if _to_reference(corpus, out, log) or _check_standalone(corpus, out, timeout, log):
        return out
    if had_report and not (out.path / "report.md").is_file():
        try:
            report_entry(out.path)
        except Exception:  # noqa: BLE001 - a report is a convenience; `shapefuzz report --write` says why
            pass
    return out


@dataclass
class Plan:
    settlements: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # CorpusError lines
    migrated: dict = field(default_factory=dict)  # entry key -> files an older layout stored that were changed

    def merges(self) -> dict:
        """minimal key -> the entry keys that end up there (several: a merge)."""
        out: dict = {}
        for s in self.settlements:
            if s.key is not None:
                out.setdefault(s.key, []).append(s.source)
        return out

    def entries_after(self, before: int) -> int:
        return before - sum(len(v) - 1 for v in self.merges().values())


def _migrate(corpus: Corpus, dirs: list, errors: list, write: bool) -> dict:
    """Entries of an older layout made current (repro_files.drop_stored_harness: the
    stored harness.py goes); without `write`, those that would be. {key: what changed}."""
    out = {}
    for d in dirs:
        try:
            changed = drop_stored_harness(corpus, d) if write else [f"{HARNESS} removed"] * (d / HARNESS).exists()
        except (CorpusError, OSError) as err:
            errors.append(str(err))
            continue
        if changed:
            out[d.name] = changed
    return out


def dedupe(root, *, write: bool = True, time_budget: float = 300.0, timeout: float = 300.0,
           reruns: int = DEFAULT_RERUNS, reshrink: bool = False, log: Callable[[str], None] | None = None,
           note: Callable[[str], None] | None = None) -> Plan:
    """Settle every entry of the corpus at `root`: re-keyed ones first, then
    shrunk ones, then the rest by hits, so later shrinks can settle onto the
    forms found before (in a dry run, the forms computed so far). `note`:
    told what is under way (the count, each shrink as it starts) and each
    entry's Settlement.line() as it is settled."""
    corpus = Corpus(root)
    plan = Plan()
    entries = list(corpus.entries())
    plan.errors = [str(e) for e in corpus.errors]
    plan.migrated = _migrate(corpus, [e.path for e in entries] + unconfirmed(root), plan.errors, write)
    entries.sort(key=lambda e: (not e.minimal, not e.shrunk, -e.hits, e.key))
    forms: list = []
    to_shrink = sum(1 for e in entries if not e.minimal and (not e.shrunk or reshrink))
    if note:
        note(f"{len(entries)} entries to settle; {to_shrink} to shrink, each within {time_budget:g} s"
             + (" (in memory: a dry run)" if not write and to_shrink else ""))
    for n, e in enumerate(entries, start=1):
        if not e.path.is_dir():  # merged away meanwhile (another process)
            continue
        if note and not e.minimal and (not e.shrunk or reshrink):
            note(f"[{n}/{len(entries)}] {e.key}: shrinking ...")
        try:
            s = settle(corpus, e.path, time_budget=time_budget, timeout=timeout, reruns=reruns, reshrink=reshrink,
                       write=write, extra_forms=forms, log=log)
        except CorpusError as err:
            plan.errors.append(str(err))
            continue
        if not write and s.key is not None and s.program is not None and s.key not in {k for k, _, _ in forms}:
            forms.append((s.key, s.program, s.verdict))  # nothing re-keyed in a dry run: the next ones try it from here
        plan.settlements.append(s)
        if note or log:
            (note or log)(s.line())
    return plan
