"""Known upstream issues: rules matched on a finding, kept as data.

corpus/known_issues.json is a JSON list of rules. A rule names a bug by its
signature key, or by a regex searched in the raw exception message, narrowed
by the exception type and a regex on the innermost torch frame; every field
given must match. A rule carries the upstream issue URL, a note and a status,
so a campaign can say "known, open" instead of filing a duplicate, and a
replay can notice when a bug marked fixed comes back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from fuzz.findings.signature import Signature, innermost_frame
from fuzz.judge.verdict import Verdict

STATUSES = ("open", "fixed", "closed", "wontfix")
_FIELDS = {"signature", "message", "exc_type", "frame", "url", "note", "status"}


class KnownIssuesError(ValueError):
    """The known-issues file is unreadable or has a bad rule (one line, names both)."""


@dataclass(frozen=True)
class Rule:
    index: int  # position in the file, for messages
    url: str
    note: str
    status: str
    signature: str = ""  # a Signature.key
    message: str = ""  # regex, re.search'ed in the raw message
    exc_type: str = ""  # short or qualified exception name
    frame: str = ""  # regex, re.search'ed in innermost_frame(verdict.frames)
    _message: re.Pattern | None = field(default=None, repr=False, compare=False)
    _frame: re.Pattern | None = field(default=None, repr=False, compare=False)

    def matches(self, sig: Signature | None, verdict: Verdict | None) -> bool:
        if self.signature and (sig is None or sig.key != self.signature):
            return False
        if (self.message or self.exc_type or self.frame) and verdict is None:
            return False
        if self._message and not self._message.search(verdict.message or ""):
            return False
        if self.exc_type and not (verdict.exc_type == self.exc_type
                                  or verdict.exc_type.endswith("." + self.exc_type)):
            return False
        if self._frame and not self._frame.search(innermost_frame(verdict.frames)):
            return False
        return True


def _rule(i: int, d) -> Rule:
    def bad(why: str) -> ValueError:
        return ValueError(f"rule {i}: {why}")

    if not isinstance(d, dict):
        raise bad(f"must be an object, got {type(d).__name__}")
    unknown = set(d) - _FIELDS
    if unknown:
        raise bad(f"unknown fields {sorted(unknown)} (allowed: {sorted(_FIELDS)})")
    for k, v in d.items():
        if not isinstance(v, str):
            raise bad(f"{k!r} must be a string, got {type(v).__name__}")
    if not d.get("signature") and not d.get("message"):
        raise bad("needs a 'signature' key or a 'message' regex")
    if d.get("signature") and not re.fullmatch(r"[0-9a-f]{12}", d["signature"]):
        raise bad(f"'signature' must be a 12-hex-digit key, got {d['signature']!r}")
    compiled = {}
    for k in ("message", "frame"):
        if d.get(k):
            try:
                compiled[k] = re.compile(d[k])
            except re.error as e:
                raise bad(f"{k!r} is not a valid regex: {e}") from None
    url = d.get("url", "")
    if url and not re.match(r"https?://", url):
        raise bad(f"'url' must be an http(s) URL or empty, got {url!r}")
    status = d.get("status", "open")
    if status not in STATUSES:
        raise bad(f"'status' must be one of {STATUSES}, got {status!r}")
    return Rule(index=i, url=url, note=d.get("note", ""), status=status, signature=d.get("signature", ""),
                message=d.get("message", ""), exc_type=d.get("exc_type", ""), frame=d.get("frame", ""),
                _message=compiled.get("message"), _frame=compiled.get("frame"))


class KnownIssues:
    def __init__(self, rules: list[Rule] | None = None):
        self.rules = list(rules or [])

    @staticmethod
    def load(path="corpus/known_issues.json") -> "KnownIssues":
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise KnownIssuesError(f"{path}: cannot read: {e.strerror or e}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise KnownIssuesError(f"{path}: not valid JSON: {e}") from None
        if not isinstance(data, list):
            raise KnownIssuesError(f"{path}: must be a JSON list of rules, got {type(data).__name__}")
        try:
            return KnownIssues([_rule(i, d) for i, d in enumerate(data)])
        except ValueError as e:
            raise KnownIssuesError(f"{path}: {e}") from None

    def match(self, signature: Signature | None, verdict: Verdict | None) -> Rule | None:
        """The first rule that matches the finding, or None."""
        for rule in self.rules:
            if rule.matches(signature, verdict):
                return rule
        return None
