"""The bug list: one row per distinct bug of a corpus, the page a user opens
after a night's run (`shapefuzz bugs [CORPUS] [--write]` -> corpus/BUGS.md).

A row is one cause (fuzz/findings/status/clusters.py: entries that share trigger
and symptom, the representative first, the rest its variants). It says what
the bug is (title, outcome class, ops, device), where it stands, which torch
releases it affects (`shapefuzz versions`), how long its short repro is, and
where its report lies. Everything comes from the entries' files: nothing is
judged (`bugs --triage` first triages the rows' entries a campaign left
untriaged: their titles read the ablation, fuzz/findings/deferred_triage.py).

Where it stands, first match wins:
    pending shrink       an entry not shrunk yet: its program is not the bug's yet
    known upstream       a known-issues rule or an upstream record names it (any entry of the cluster)
    fixed                it passed at the last replay
    fixed in X / <=X     it passes on the newest release it ran on (X), though an older one was affected
                         (X exactly where the release before it was affected)
    new                  its repro fails on the newest release (the package index's, fuzz/releases.py,
                         or the newest any entry of the corpus ran on, whichever is newer): `shapefuzz
                         versions` ran it there, or it was found there; the newest torch decides, not the
                         one that found it
    not checked on X     it was found on an older torch and never ran on X, the newest release,
                         or it was never rerun at all (a fresh campaign's corpus knows no newer torch than
                         its own): `shapefuzz versions CORPUS --torch newest` checks it (a CUDA finding on
                         its CPU twin where that reproduces; a GPU box with the newest torch otherwise);
                         torch_xla entries are measured against the torch_xla they were found with
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import quote

from fuzz.findings.report import markdown as md
from fuzz.findings.store.corpus import KNOWN as KNOWN_DIR
from fuzz.findings.status.versions import ran_on, versions_record

NEW, KNOWN, FIXED = "new", "known upstream", "fixed"
FIXED_NEWER, UNCHECKED, PENDING = "fixed on a newer torch", "not checked on the newest torch", "pending shrink"
TRACKED = "tracked class (by design)"  # one policy question, never a new bug per program (tracked_class)
ORDER = (NEW, UNCHECKED, KNOWN, TRACKED, FIXED_NEWER, FIXED, PENDING)


@dataclass
class BugRow:
    key: str
    title: str
    outcome: str
    ops: list
    device: str
    status: str  # NEW, KNOWN or FIXED
    upstream: str  # the link, or why none ("not found upstream (2026-11-26)")
    versions: str  # "affected 2.6-2.13; first fixed in -", or "-"
    repro_lines: int | None  # code lines of the short repro (None: the entry uses its harness)
    repro_checked: str  # whether the short repro was run standalone, and what it showed
    report: str  # the report's path ("" when none is written)
    hits: int  # of the whole cluster
    checked_on: str = "-"  # the newest torch its repro ran on and what it did there ("2.14.1: affected (CPU)")
    variants: list = field(default_factory=list)  # the cluster's other entries' keys
    untriaged: str = ""  # why its entry has no ablation of its program ("": it has one, or its kind no triage)

    def to_dict(self) -> dict:
        return asdict(self)


def _title(entry) -> str:
    from fuzz.findings.report.issue import entry_summary, report_title
    from fuzz.findings.report.xla import _steps_title
    from fuzz.program.ir import Program

    p, v = entry.program, entry.verdict
    if isinstance(p, Program):
        return report_title(p, v, entry_summary(entry))
    return _steps_title(p, v)


def _user_names(program, ops: list) -> list:
    """The ops as the torch API a user writes (mul_scalar_ is Tensor.mul_, observe is Tensor.cpu), each once, sorted:
    the harness's op names mean nothing to a maintainer."""
    from fuzz.kinds import kind_of

    kind = kind_of(program)
    return sorted({kind.op_label(op) for op in ops if isinstance(op, str)})


def _upstream(entry, known) -> tuple[str, str]:
    """(status, link or note) from the known-issues rules, else the entry's upstream record."""
    from fuzz.findings.replay import _known

    rule = _known(known, entry) if known is not None else None
    if rule is not None:
        return KNOWN, f"{rule.name} ({rule.status})"
    rec = entry.meta.get("upstream") or {}
    if rec.get("url"):
        return KNOWN, f"{rec['url']} ({rec.get('state', 'seen')}; {rec.get('note', '')})".replace("; )", ")")
    if rec.get("checked"):
        from fuzz.findings.status.upstream_search import candidate_urls

        urls = candidate_urls(rec)[:3]  # `shapefuzz upstream`'s, for a person to confirm
        return NEW, f"not found upstream ({rec['checked']})" + (f"; candidates: {', '.join(urls)}" if urls else "")
    return NEW, "not searched upstream yet"


def versions_text(rec: dict | None) -> str:
    if not rec:
        return "-"
    text = _range_text(rec)
    twin = rec.get("cpu") if isinstance(rec.get("cpu"), dict) else None
    if twin and twin.get("reproduces"):
        text += f"; its CPU twin: {_range_text(twin)}"
    elif twin:
        text += "; its CPU twin does not fail"
    return text


def _range_text(rec: dict) -> str:
    results = [r.get("result") for r in (rec.get("releases") or {}).values() if isinstance(r, dict)]
    if results and all(r == "not run" for r in results):
        return "not run here (no CUDA device)"
    affected = rec.get("affected") or []
    text = f"affected {', '.join(affected) or 'none'}"
    text += f"; first fixed in {rec['first_fixed']}" if rec.get("first_fixed") else ""
    clean = rec.get("not_affected") or []
    if clean and not rec.get("first_fixed"):
        text += f"; passes on {', '.join(clean)}"
    if rec.get("partial"):
        text += " (partial: the releases this machine has)"
    return text


def _behind(entry, ran, newest: str | None) -> str:
    """What the checked-on text adds where the entry's repro never ran on the newest release: that it is
    out, and for a CUDA finding whose CPU twin does not fail, that it waits for a current CUDA torch."""
    from fuzz.findings.status.versions import _key

    if not newest or ran is None or _key(ran[0]) >= _key(newest):
        return ""
    if entry.program.device_type() == "cuda" and ran[2] != "CPU twin":
        return f"; {newest} is out: waits for a check on a CUDA torch {newest}"
    return f"; {newest} is out"


def _status(entry, known, newest: str | None, index: str | None = None) -> tuple[str, str, str]:
    """(status, upstream text, checked-on text) of one entry (the module docstring's order). `newest`: the
    newest release the corpus or the package index knows; `index`: the package index's, where known."""
    from fuzz.findings.status.versions import PASSES, _key, newest_checked

    status, upstream = _upstream(entry, known)
    ran = ran_on(entry)
    checked = "-" if ran is None else f"{ran[0]}: {ran[1]}" + (f" ({ran[2]})" if ran[2] else "")
    checked += _behind(entry, ran, newest) if _line(entry) == "torch" else ""
    last = entry.meta.get("last_replay") or {}
    if status == KNOWN:
        return status, upstream, checked
    from fuzz.findings.status.clusters import tracked_class

    if tracked_class(entry):
        return TRACKED, "Inductor gives up exact stride matching where strides hold unbacked sizes, on purpose", \
            checked
    if not entry.shrunk and not entry.minimal:
        return PENDING, upstream, checked
    if last.get("status") == "fixed":
        return FIXED, f"{upstream}; passed at the replay of {last.get('at', '?')} (torch {last.get('torch', '?')})", \
            checked
    if ran is not None and ran[1] == PASSES:
        return FIXED_NEWER, f"{upstream}; {_fixed_in(entry, ran[0])}", checked
    if newest and (ran is None or _key(ran[0]) < _key(newest)):
        return UNCHECKED, upstream, checked
    if _line(entry) == "torch" and newest_checked(versions_record(entry)) is None and \
            not (index and ran is not None and _key(ran[0]) >= _key(index)):
        # found, never rerun: a corpus of one campaign knows no newer torch than the one that found it, and
        # two of a fresh CPU campaign's five "new" rows passed on the next release (torch 2.11 -> 2.13); but
        # a finding made on the package index's newest release was checked there by being found
        return UNCHECKED, upstream, checked
    return NEW, upstream, checked


def _fixed_in(entry, passes_on: str) -> str:
    """"fixed in 2.15.0" where the record has the first release that passes after the last affected one,
    else "fixed in <=2.15.0" (it passes on the newest it ran on; which release fixed it is not known)."""
    rec = versions_record(entry) or {}
    for part in (rec, rec.get("cpu") if isinstance(rec.get("cpu"), dict) else {}):
        if part.get("first_fixed") and part.get("affected"):
            return f"fixed in {part['first_fixed']} (affected {', '.join(map(str, part['affected']))})"
    return f"fixed in <={passes_on}"


def _line(entry) -> str:
    """Which releases an entry is measured against: torch_xla's (its env's torch is the one torch_xla
    pins) or torch's."""
    return "xla" if entry.program.device_type() == "xla" else "torch"


def newest_known(entries, index: str | None = None) -> dict:
    """{line: the newest release any entry's repro ran on, or any entry was found with} (_line); torch's
    is at least `index`, the package index's newest release where it is known."""
    from fuzz.findings.status.versions import _key

    newest = {"torch": index} if index else {}
    for e in entries:
        r = ran_on(e)
        if r is not None and (_line(e) not in newest or _key(r[0]) > _key(newest[_line(e)])):
            newest[_line(e)] = r[0]
    return newest


def index_newest() -> tuple[str | None, str]:
    """(the newest torch release on the package index, how it is known), or (None, why not): asked at most
    once a day (fuzz/releases.py), never failing a read-only listing offline."""
    from fuzz.releases import newest_or_recorded

    return newest_or_recorded()


def bug_rows(corpus_root, unreadable: list | None = None, index: str | None = None) -> list[BugRow]:
    """One row per cause (clusters of readable entries); `unreadable` (when given) gets a CorpusError for each
    entry dir that could not be read; `index`: the package index's newest torch release, where known.
    KnownIssuesError when the corpus's known_issues.json is malformed."""
    from fuzz.findings.status.clusters import clusters
    from fuzz.findings.store.corpus import Corpus
    from fuzz.findings.deferred_triage import untriaged
    from fuzz.findings.replay import _known_issues

    root = Path(corpus_root)
    corpus = Corpus(root)
    known = _known_issues(root)
    entries = list(corpus.entries())
    newest = newest_known(entries, index)
    rows = []
    for c in clusters(entries):
        rated = [(e, *_status(e, known, newest.get(_line(e)), index)) for e in c.entries]
        # the cluster stands where its most settled entry does (known upstream, fixed); else it is new if
        # any entry is; the first such entry in the cluster's order (CPU first, then smallest) speaks
        first = (KNOWN, TRACKED, FIXED, FIXED_NEWER, NEW, UNCHECKED, PENDING)
        e, status, upstream, ran_text = min(rated, key=lambda r: first.index(r[1]))
        seen = e.meta.get("seen_with") or {}
        ops = _user_names(e.program, seen.get("ops") or sorted({c.op for c in getattr(e.program, "ops", [])} |
                                                               {s.op for _, s in getattr(e.program, "steps", list)()}))
        short = e.meta.get("short_repro") or {}
        checked = ("not run" if not short.get("checked") else
                   f"fails standalone (torch {short.get('torch')})" if short.get("reproduces") else
                   f"did not fail standalone: {short.get('shown', '')}")
        report = e.path / "report.md"
        why = untriaged(e) if status != PENDING else None
        rows.append(BugRow(key=e.key, title=_title(e), outcome=e.verdict.outcome.value, ops=list(ops),
                           device=e.program.device_type(), status=status, upstream=upstream,
                           versions=versions_text(e.meta.get("versions")),
                           repro_lines=short.get("lines"), repro_checked=checked,
                           report=str(report) if report.is_file() else "", hits=sum(x.hits for x in c.entries),
                           checked_on=ran_text, variants=[x.key for x in c.entries if x is not e],
                           untriaged=why or ""))
    if unreadable is not None:
        unreadable.extend(corpus.errors)
    return sorted(rows, key=lambda r: (ORDER.index(r.status), r.device, r.outcome, r.key))


def set_aside_lines(corpus_root) -> list[str]:
    """A paragraph on the corpus's set-aside entries (findings/standalone.py), if it has any."""
    from fuzz.findings.standalone import unconfirmed

    held = unconfirmed(corpus_root)
    if not held:
        return []
    return [f"{len(held)} more finding(s) did not fail alone in a fresh process (their verdict needed the cases "
            f"a worker ran before them), so they are no bug to file: set aside in unconfirmed/ "
            f"({', '.join(p.name for p in held[:8])}{' ...' if len(held) > 8 else ''}).", ""]


def known_in_reference(corpus_root) -> list[Path]:
    """The entries of a corpus set aside as causes its reference holds."""
    root = Path(corpus_root) / KNOWN_DIR
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []


def known_lines(corpus_root) -> list[str]:
    """BUGS.md's paragraph on them: each reference row once, with its status and this corpus's hits."""
    from fuzz.findings.store.corpus_files import CorpusFileError, read

    rows: dict = {}
    for d in known_in_reference(corpus_root):
        try:
            meta = read(d / "meta.json")
        except CorpusFileError:
            continue
        ref = meta.get("reference") if isinstance(meta.get("reference"), dict) else {}
        key = str(ref.get("entry", "?"))
        hits, status, upstream, where = rows.get(key, (0, ref.get("status"), ref.get("upstream"), ref.get("corpus")))
        rows[key] = (hits + int(meta.get("hits", 0) or 0), status, upstream, where)
    if not rows:
        return []
    parts = [f"{md.code(k, 64)} ({md.text(str(s), 60)}; {md.text(str(u), 300)}): {h} hit(s)"
             for k, (h, s, u, _) in sorted(rows.items())]
    where = md.text(str(next(iter(rows.values()))[3]), 300)
    return [f"{len(rows)} cause(s) found here are already in the reference corpus {where}, counted under its "
            f"rows and set aside in {KNOWN_DIR}/: " + "; ".join(parts) + ".", ""]


def summary_line(rows: list[BugRow]) -> str:
    counts = ", ".join(f"{sum(r.status == s for r in rows)} {s}" for s in ORDER if any(r.status == s for r in rows))
    return f"{len(rows)} distinct bugs: {counts or 'none'}."


def pending_lines(rows: list[BugRow]) -> list[str]:
    """A paragraph on the entries not shrunk yet: no row of BUGS.md, since their programs are not the bugs'."""
    held = [r.key for r in rows if r.status == PENDING]
    if not held:
        return []
    return [f"{len(held)} more finding(s) are not shrunk yet, so their programs are not yet the bugs': "
            f"{', '.join(held[:8])}{' ...' if len(held) > 8 else ''}. `shapefuzz dedupe CORPUS` (or the campaign's "
            "`shapefuzz followup STATE`) shrinks them.", ""]


def untriaged_lines(rows: list[BugRow]) -> list[str]:
    """A paragraph on the rows whose entry was not triaged (a campaign defers it until the report): their titles
    and reports do not yet say which backends, devices, static shapes or options the bug needs."""
    held = [r.key for r in rows if r.untriaged and r.status != PENDING]
    if not held:
        return []
    return [f"{len(held)} of these bugs are not triaged yet, so their titles do not yet say which backends, "
            f"devices, shapes or options they need: {', '.join(held[:8])}{' ...' if len(held) > 8 else ''}. "
            "`shapefuzz report ENTRY` triages one first; `shapefuzz bugs CORPUS --triage` triages them all.", ""]


def _report_link(r: BugRow) -> str:
    if not r.report:
        return "-"
    name = Path(r.report).parent.name
    return f"[report]({quote(name)}/report.md)" if name else "-"


def newest_line(index: str | None, how: str) -> str:
    """What BUGS.md and `bugs` say of the release "new" is judged on."""
    if index:
        return f"The newest torch release is {index} ({how}); a bug is new only where its repro fails on it."
    return (f"The newest torch release is not known here ({how}); a bug is new only where it fails on the newest "
            "torch any entry ran on.")


def markdown(rows: list[BugRow], corpus_root, newest: str = "") -> str:
    pending = pending_lines(rows)
    rows = [r for r in rows if r.status != PENDING]
    lines = [f"# Bugs in {md.text(corpus_root, 300)}", "",
             f"{summary_line(rows)} One row per cause (entries with the same trigger and symptom are one row, the "
             "others its variants). A bug is new only where it fails on the newest torch release (`checked on`). "
             f"{md.text(newest, 300) + ' ' if newest else ''}Written by `shapefuzz bugs --write`.", "",
             *set_aside_lines(corpus_root), *known_lines(corpus_root), *pending, *untriaged_lines(rows),
             "| bug | title | class | ops | device | status | checked on | upstream | versions | repro | report |"
             " variants |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        repro = f"{r.repro_lines} lines" if r.repro_lines else "harness"
        ops = ", ".join(str(op) for op in r.ops[:6]) + (" ..." if len(r.ops) > 6 else "")
        cells = [md.code(r.key, 64)] + [md.text(x, 600) for x in (
            r.title, r.outcome, ops, r.device, r.status, r.checked_on, r.upstream, r.versions,
            f"{repro} ({r.repro_checked})")] + [_report_link(r), ", ".join(md.code(k, 64) for k in r.variants) or "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
