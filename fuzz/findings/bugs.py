"""The bug list: one row per distinct bug of a corpus, the page a user opens
after a night's run (`shapefuzz bugs [CORPUS] [--write]` -> corpus/BUGS.md).

A row says what the bug is (title, outcome class, ops, device), where it
stands (new; known upstream, with the link, from a known-issues rule or the
entry's upstream record; fixed at the last replay), which torch releases it
affects (`shapefuzz versions`), how long its short repro is, and where its
report lies. Everything comes from the entry's files: nothing is judged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

NEW, KNOWN, FIXED = "new", "known upstream", "fixed"


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
    hits: int

    def to_dict(self) -> dict:
        return asdict(self)


def _title(entry) -> str:
    from fuzz.findings.report import report_title
    from fuzz.findings.report_xla import _steps_title
    from fuzz.findings.triage import load_ablation
    from fuzz.program.ir import Program

    p, v = entry.program, entry.verdict
    if isinstance(p, Program):
        doc = load_ablation(entry.path)
        return report_title(p, v, doc.get("summary") if doc else None)
    return _steps_title(p, v)


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
        return NEW, f"not found upstream ({rec['checked']})"
    return NEW, "not searched upstream yet"


def versions_text(rec: dict | None) -> str:
    if not rec:
        return "-"
    affected = rec.get("affected") or []
    text = f"affected {', '.join(affected) or 'none'}"
    text += f"; first fixed in {rec['first_fixed']}" if rec.get("first_fixed") else ""
    clean = rec.get("not_affected") or []
    if clean and not rec.get("first_fixed"):
        text += f"; passes on {', '.join(clean)}"
    if rec.get("partial"):
        text += " (partial: the releases this machine has)"
    return text


def bug_rows(corpus_root, unreadable: list | None = None) -> list[BugRow]:
    """One row per readable entry; `unreadable` (when given) gets a CorpusError for each entry dir that could
    not be read. KnownIssuesError when the corpus's known_issues.json is malformed."""
    from fuzz.findings.corpus import Corpus
    from fuzz.findings.replay import _known_issues

    root = Path(corpus_root)
    corpus = Corpus(root)
    known = _known_issues(root)
    rows = []
    for e in corpus.entries():
        status, upstream = _upstream(e, known)
        last = e.meta.get("last_replay") or {}
        if last.get("status") == "fixed":
            status = FIXED
            upstream = f"{upstream}; passed at the replay of {last.get('at', '?')} (torch {last.get('torch', '?')})"
        seen = e.meta.get("seen_with") or {}
        ops = seen.get("ops") or sorted({c.op for c in getattr(e.program, "ops", [])} |
                                        {s.op for _, s in getattr(e.program, "steps", list)()})
        short = e.meta.get("short_repro") or {}
        checked = ("not run" if not short.get("checked") else
                   f"fails standalone (torch {short.get('torch')})" if short.get("reproduces") else
                   f"did not fail standalone: {short.get('shown', '')}")
        report = e.path / "report.md"
        rows.append(BugRow(key=e.key, title=_title(e), outcome=e.verdict.outcome.value, ops=list(ops),
                           device=e.program.device_type(), status=status, upstream=upstream,
                           versions=versions_text(e.meta.get("versions")),
                           repro_lines=short.get("lines"), repro_checked=checked,
                           report=str(report) if report.is_file() else "", hits=e.hits))
    if unreadable is not None:
        unreadable.extend(corpus.errors)
    order = {NEW: 0, KNOWN: 1, FIXED: 2}
    return sorted(rows, key=lambda r: (order[r.status], r.device, r.outcome, r.key))


def set_aside_lines(corpus_root) -> list[str]:
    """A paragraph on the corpus's set-aside entries (findings/standalone.py), if it has any."""
    from fuzz.findings.standalone import unconfirmed

    held = unconfirmed(corpus_root)
    if not held:
        return []
    return [f"{len(held)} more finding(s) did not fail alone in a fresh process (their verdict needed the cases "
            f"a worker ran before them), so they are no bug to file: set aside in unconfirmed/ "
            f"({', '.join(p.name for p in held[:8])}{' ...' if len(held) > 8 else ''}).", ""]


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[BugRow], corpus_root) -> str:
    counts = {s: sum(r.status == s for r in rows) for s in (NEW, KNOWN, FIXED)}
    lines = [f"# Bugs in {corpus_root}", "",
             f"{len(rows)} distinct bugs: {counts[NEW]} new, {counts[KNOWN]} known upstream, {counts[FIXED]} fixed "
             "at the last replay. Written by `shapefuzz bugs --write`; each entry's report.md is ready to file.", "",
             *set_aside_lines(corpus_root),
             "| bug | title | class | ops | device | status | upstream | versions | repro | report |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        repro = f"{r.repro_lines} lines" if r.repro_lines else "harness"
        report = f"[report]({Path(r.report).parent.name}/report.md)" if r.report else "-"
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"`{r.key}`", r.title, r.outcome, ", ".join(r.ops[:6]) + (" ..." if len(r.ops) > 6 else ""), r.device,
            r.status, r.upstream, r.versions, f"{repro} ({r.repro_checked})", report)) + " |")
    return "\n".join(lines) + "\n"
