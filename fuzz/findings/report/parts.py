"""Parts of a report beyond PyTorch's template fields: the torch releases a
bug affects and a suggested duplicate search. (The stamp naming the program a
report describes is fuzz/findings/store/scripts.py's, beside the other digests.)"""

from __future__ import annotations

import re

from fuzz.findings.report import markdown as md
from fuzz.judge.verdict import Verdict


def affected_text(entry, scrub=lambda text: text) -> str:
    """The torch releases the entry's short repro was run under, and what it did
    (`scrub`: what makes an error's text fit a report)."""
    rec = (entry.meta or {}).get("versions") or {}
    twin = rec.get("cpu") if isinstance(rec.get("cpu"), dict) else {}
    parts = [("", rec)] + ([(" (the program on CPU)", twin)] if twin.get("reproduces") else [])
    rows = ["| torch | result |", "|---|---|"]
    tails = []
    for where, part in parts:
        for rel, r in (part.get("releases") or {}).items():
            r = r if isinstance(r, dict) else {}
            if r.get("result") == "not run":  # a CUDA repro on a CPU machine: its CPU twin speaks
                continue
            shown = f": {scrub(str(r.get('shown', '')))[:100]}" if r.get("result") == "error" else ""
            rows.append(f"| {md.code(r.get('torch', rel), 60)}{md.text(where)} | "
                        f"{md.text(str(r.get('result')) + shown, 200)} |")
        first = part.get("first_fixed")
        tails.append(f"First fixed in {md.text(first, 60)}{md.text(where)}." if first else (
            f"Not fixed in any release tried{md.text(where)}." if part.get("affected") else ""))
    behind = _behind_newest(entry)
    if len(rows) == 2:
        return behind
    tail = " ".join(t for t in tails if t) + (f" {behind}" if behind else "")
    if rec.get("partial") and not twin.get("reproduces"):
        tail += " Partial: only the releases installed where it was run (a GPU box)."
    return "\n".join(rows) + (f"\n\n{tail.strip()}" if tail.strip() else "")


def _behind_newest(entry) -> str:
    """A sentence where the repro never ran on the newest torch release known here (fuzz/releases.py)."""
    from fuzz.findings.status.versions import ran_on
    from fuzz.releases import known_newest, release_key

    newest = known_newest()
    ran = ran_on(entry)
    if not newest or ran is None or entry.program.device_type() == "xla" or \
            release_key(ran[0]) >= release_key(newest):
        return ""
    return (f"Last checked on torch {md.text(ran[0], 40)}; torch {md.text(newest, 40)} is the newest release "
            "and this repro has not run on it yet.")


def duplicate_search(v: Verdict) -> str:
    """What to search upstream before filing: the masked message and the innermost torch frame."""
    from urllib.parse import quote_plus

    from fuzz.findings.signature import innermost_frame, normalize_message

    if v.exc_type:
        msg = normalize_message(v.message)
        words = " ".join(w for w in re.split(r"[^\w']+", msg) if w and w not in ("N", "s", "u") and not
                         w.startswith("<"))[:80]
        frame = innermost_frame(v.frames)
        query = f"is:issue {v.exc_type.rsplit('.', 1)[-1]} {words}".strip()
        lines = [f"- the message, numbers and symbols masked: {md.code(msg, 500)}"]
        if frame:
            lines.append(f"- the innermost torch frame: {md.code(frame, 300)}")
    else:
        query = f"is:issue torch.compile {v.outcome.value.replace('-', ' ')}"
        lines = [f"- no exception: a {v.outcome.value} ({md.text(v.where or 'output', 80)})"]
    lines.append(f"- [search pytorch/pytorch issues](https://github.com/pytorch/pytorch/issues?q={quote_plus(query)})")
    return "\n".join(lines)
