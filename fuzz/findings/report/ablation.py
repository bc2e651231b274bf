"""The ablation of a report, collapsed: the rows a reader needs (as found,
backend, device, static vs dynamic, mode) and only the other variants (Inductor
config options) whose result differs from the as-found one. Every cell comes
from ablation.json, data: it goes through fuzz/findings/report/markdown.py."""

from __future__ import annotations

from fuzz.findings.report import markdown as md
from fuzz.findings.report.scrubbing import scrub


def _first_line(text: str, limit: int = 90) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


_KEY_AXES = ("baseline", "backend", "shapes", "device", "mode")  # always shown; option rows only where they matter


def _variant_text(row: dict) -> str:
    c = row.get("changes") if isinstance(row.get("changes"), dict) else {}
    axis = row.get("axis")
    if axis == "baseline":
        return "as found"
    if axis == "backend":
        return md.code(f'backend="{c.get("backend")}"')
    if axis == "shapes":
        if c == {"marks": "static"}:
            return "no dims marked dynamic"
        if c == {"dynamic": False}:
            return md.code("dynamic=False")
        return md.code("dynamic=False") + ", no dims marked dynamic"
    if axis == "device":
        return md.code(f'device="{c.get("device")}"')
    if axis == "mode":
        return md.code("mode=None")
    if axis in ("inductor-config", "inductor-config-set") and isinstance(c.get("options"), dict) and c["options"]:
        return "<br>".join(md.code(f"torch._inductor.config.{k} = {v!r}") for k, v in c["options"].items())
    return md.text(scrub(str(row.get("variant", ""))), 200)


def _result_text(row: dict) -> str:
    status = row.get("status")
    if status == "reproduces":
        return "**reproduces**"
    if status == "passes":
        return "passes"
    summary = str(row.get("summary", ""))
    if status == "other":
        outcome = md.text(row.get("outcome", ""), 40)
        detail = md.text(scrub(_first_line(summary, 100)))
        return f"fails differently ({outcome}): {detail}" if detail else f"fails differently ({outcome})"
    if status == "skipped":
        return "skipped: " + md.text(scrub(summary), 300)
    return "could not run: " + md.text(scrub(_first_line(summary, 100)))


def ablation_rows(doc: dict) -> tuple[list[dict], int]:
    """The rows a reader needs: the key ones (as found, backend, device, static vs dynamic, mode) and every other
    one whose result differs from the as-found row's; and how many were left out (they all read the same)."""
    rows = [r for r in doc.get("rows", []) if isinstance(r, dict)]
    base = next((r.get("status") for r in rows if r.get("axis") == "baseline"), "reproduces")
    keep = [r for r in rows if r.get("axis") in _KEY_AXES or r.get("status") != base]
    return keep, len(rows) - len(keep)


def ablation_table(doc: dict) -> str:
    """The ablation, collapsed (`ablation_rows`), as a Markdown table; every cell escaped."""
    rows, dropped = ablation_rows(doc)
    lines = ["| torch.compile variant | result |", "|---|---|"]
    lines += [f"| {_variant_text(row)} | {_result_text(row)} |" for row in rows]
    if dropped:
        lines += ["", f"{dropped} more variant(s) (Inductor config options) give the same result as found "
                      "and are left out."]
    return "\n".join(lines)
