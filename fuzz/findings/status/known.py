"""Known upstream issues: rules matched on a finding, kept as data.

corpus/known_issues.json is a JSON list of rules. A rule names a bug by what
the finding shows -- its signature key, a regex searched in the raw exception
message, the exception type, a regex on the innermost torch frame, the
outcome -- and by what its program holds: ops (every one named must be in
the program), a compile setting ("mode=max-autotune", "dynamic=True",
"backend=aot_eager", "dynamo.capture_scalar_outputs=True", "options.split_reductions=False")
and a device type. A rule may name a root cause rather than one minimal form
(fuzz/findings/status/triggers.py): "outcomes", any of several outcomes (one cause
seen as a divergence, an input mutation or a stride mismatch); "escapes", ops
a result of which is returned or written in place; "operand_dtypes", {op:
[dtypes]} an op's first operand must have. Every field given must match, and
a rule needs at least one of signature, message, ops, outcome or outcomes. A rule carries the upstream issue
URL, a note and a status, so a campaign counts a matching finding as known
(by rule) and writes no entry for it, and a replay can notice when a bug
marked fixed comes back. `checked` records when upstream was last searched.

The file is read by the corpus-file loader (fuzz/findings/store/corpus_files.py:
its schema, size cap, no duplicate keys); every command refuses a malformed
one with one line. Regexes run on a linear-time engine with a memory cap and a
time budget per file (fuzz/findings/status/rule_regex.py): a pattern the engine
refuses is one line naming the rule; a search past the budget counts as no
match, with a warning on stderr, never a hang.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from fuzz.findings.status.rule_regex import Budget, Pattern, PatternError, compile_all
from fuzz.findings.signature import Signature, innermost_frame
from fuzz.judge.verdict import Verdict

STATUSES = ("open", "fixed", "closed", "wontfix")
_FIELDS = {"signature", "message", "exc_type", "frame", "outcome", "ops", "setting", "device", "url", "note", "status",
           "checked", "outcomes", "escapes", "operand_dtypes"}


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
    outcome: str = ""  # the verdict's outcome ("divergence", "compiled-only-error", ...)
    ops: tuple = ()  # op names, each of which the program must hold
    setting: str = ""  # "name=value" of the program's settings ("mode=max-autotune", "dynamo.KEY=VALUE", ...)
    device: str = ""  # the program's device type (cpu, cuda, xla)
    checked: str = ""  # when upstream was last searched for it (a date)
    outcomes: tuple = ()  # any of these outcomes
    escapes: tuple = ()  # op names: a result of each is returned or written in place
    operand_dtypes: tuple = ()  # ((op, (dtype, ...)), ...): each op's first operand has one of its dtypes
    _message: Pattern | None = field(default=None, repr=False, compare=False)
    _frame: Pattern | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        """How stats and logs name it: its URL, else its place in the file."""
        return self.url or f"known-issues rule {self.index}"

    def matches(self, sig: Signature | None, verdict: Verdict | None, program=None, budget: Budget | None = None) -> bool:
        """Whether the finding (of `program`) fits every field; `budget`: the time its regex searches may take
        (those of every rule of its file, together)."""
        budget = budget or Budget()
        if self.signature and (sig is None or sig.key != self.signature):
            return False
        if (self.message or self.exc_type or self.frame or self.outcome) and verdict is None:
            return False
        if (self.outcomes) and verdict is None:
            return False
        if (self.ops or self.setting or self.device or self.escapes or self.operand_dtypes) and (
                program is None or not self._fits(program, verdict.where if verdict is not None else "")):
            return False
        if self.outcome and verdict.outcome.value != self.outcome:
            return False
        if self.outcomes and verdict.outcome.value not in self.outcomes:
            return False
        if self._message and not self._search("message", self._message, verdict.message or "", budget):
            return False
        if self.exc_type and not (verdict.exc_type == self.exc_type
                                  or verdict.exc_type.endswith("." + self.exc_type)):
            return False
        if self._frame and not self._search("frame", self._frame, innermost_frame(verdict.frames), budget):
            return False
        return True

    def _search(self, what: str, pattern: Pattern, text: str, budget: Budget) -> bool:
        """pattern.search(text) within the budget; a search that runs out counts as no match (warned once)."""
        found = pattern.search(text, budget)
        if found is None:
            if (self.index, what) not in _WARNED:
                _WARNED.add((self.index, what))
                print(f"shapefuzz: warning: known-issues rule {self.index}: its {what!r} regex ran out of the "
                      "time its rules file has for one finding and counts as no match; simplify it", file=sys.stderr)
            return False
        return found

    def _fits(self, program, where: str = "") -> bool:
        """The program predicates: ops held, the setting, the device type."""
        held = {c.op for c in getattr(program, "ops", ())} | {s.op for _, s in getattr(program, "steps", list)()}
        if not set(self.ops) <= held:
            return False
        if self.device and program.device_type() != self.device:
            return False
        from fuzz.findings.status.triggers import escapes, operand_dtypes

        if not all(escapes(program, op, where) for op in self.escapes):
            return False
        if not all(operand_dtypes(program, op) & set(dts) for op, dts in self.operand_dtypes):
            return False
        return not self.setting or _setting_of(program, self.setting.split("=", 1)[0]) == self.setting.split("=", 1)[1]


_WARNED: set = set()  # (rule index, field) whose regex ran out of time, warned about once per process


def _compiled(rules: list) -> list:
    """The rules with their regexes compiled, all of one file together (their memory is shared);
    ValueError naming the rule and the field of the first one the engine refuses."""
    fields = [(r, k) for r in rules for k in ("message", "frame") if getattr(r, k)]
    try:
        patterns = compile_all([getattr(r, k) for r, k in fields])
    except PatternError as e:
        rule, k = fields[e.index]
        raise ValueError(f"rule {rule.index}: {k!r} {e}") from None
    done = {}
    for (r, k), p in zip(fields, patterns):
        done.setdefault(r.index, {})[f"_{k}"] = p
    return [replace(r, **done.get(r.index, {})) for r in rules]


def _setting_of(program, name: str) -> str | None:
    """The program setting `name` as text ("mode", "dynamic", "backend", "dynamo.KEY", "options.KEY")."""
    s = getattr(program, "settings", None)
    if s is None:
        return None
    group, _, key = name.partition(".")
    if key and group in ("dynamo", "options"):
        table = getattr(s, group, None) or {}
        return str(table[key]) if key in table else None
    return str(getattr(s, name)) if hasattr(s, name) else None


def _rule(i: int, d) -> Rule:
    def bad(why: str) -> ValueError:
        return ValueError(f"rule {i}: {why}")

    if not isinstance(d, dict):
        raise bad(f"must be an object, got {type(d).__name__}")
    unknown = set(d) - _FIELDS
    if unknown:
        raise bad(f"unknown fields {sorted(unknown)} (allowed: {sorted(_FIELDS)})")
    for k, v in d.items():
        if k in ("ops", "escapes", "outcomes"):
            if not isinstance(v, list) or not v or not all(isinstance(o, str) and o.replace("-", "_").isidentifier()
                                                           for o in v):
                raise bad(f"{k!r} must be a non-empty list of names")
        elif k == "operand_dtypes":
            from fuzz.program.dtypes import ALL as DTYPES

            if not isinstance(v, dict) or not v or not all(
                    isinstance(op, str) and op.isidentifier() and isinstance(dts, list) and dts
                    and all(dt in DTYPES for dt in dts) for op, dts in v.items()):
                raise bad("'operand_dtypes' must map op names to non-empty lists of dtype names")
        elif not isinstance(v, str):
            raise bad(f"{k!r} must be a string, got {type(v).__name__}")
    if not any(d.get(k) for k in ("signature", "message", "ops", "outcome", "outcomes")):
        raise bad("needs a 'signature' key, a 'message' regex, 'ops', an 'outcome' or 'outcomes'")
    if d.get("setting") and "=" not in d["setting"]:
        raise bad(f"'setting' must be NAME=VALUE, got {d['setting']!r}")
    if d.get("outcome"):
        from fuzz.judge.verdict import Outcome

        if d["outcome"] not in {o.value for o in Outcome}:
            raise bad(f"'outcome' {d['outcome']!r} is not an outcome")
    for o in d.get("outcomes", ()):
        from fuzz.judge.verdict import Outcome

        if o not in {x.value for x in Outcome}:
            raise bad(f"'outcomes' names {o!r}, which is not an outcome")
    if d.get("signature") and not re.fullmatch(r"[0-9a-f]{12}", d["signature"]):
        raise bad(f"'signature' must be a 12-hex-digit key, got {d['signature']!r}")
    url = d.get("url", "")
    if url and not re.match(r"https?://", url):
        raise bad(f"'url' must be an http(s) URL or empty, got {url!r}")
    status = d.get("status", "open")
    if status not in STATUSES:
        raise bad(f"'status' must be one of {STATUSES}, got {status!r}")
    return Rule(index=i, url=url, note=d.get("note", ""), status=status, signature=d.get("signature", ""),
                message=d.get("message", ""), exc_type=d.get("exc_type", ""), frame=d.get("frame", ""),
                outcome=d.get("outcome", ""), ops=tuple(d.get("ops", ())), setting=d.get("setting", ""),
                device=d.get("device", ""), checked=d.get("checked", ""), outcomes=tuple(d.get("outcomes", ())),
                escapes=tuple(d.get("escapes", ())),
                operand_dtypes=tuple((op, tuple(dts)) for op, dts in d.get("operand_dtypes", {}).items()))


class KnownIssues:
    def __init__(self, rules: list[Rule] | None = None):
        self.rules = _compiled(list(rules or []))

    @staticmethod
    def load(path="corpus/known_issues.json") -> "KnownIssues":
        from fuzz.datafile import DataFileError, read_json
        from fuzz.findings.store.corpus_files import KINDS, violation

        path = Path(path)
        try:  # size-capped, no duplicate keys, never through a symlink
            data = read_json(path, KINDS["known_issues.json"][1], follow_symlinks=False)
        except DataFileError as e:
            raise KnownIssuesError(str(e)) from None
        if not isinstance(data, list):
            raise KnownIssuesError(f"{path}: must be a JSON list of rules, got {type(data).__name__}")
        try:
            rules = [_rule(i, d) for i, d in enumerate(data)]
        except ValueError as e:
            raise KnownIssuesError(f"{path}: {e}") from None
        why = violation(data, "known_issues.json")  # the caps on counts and lengths (corpus_files.json)
        if why:
            raise KnownIssuesError(f"{path}: " + re.sub(r"^\[([0-9]+)\]\.?", r"rule \1: ", why))
        try:
            return KnownIssues(rules)  # the regexes compiled, all of the file together: the engine may refuse one
        except ValueError as e:
            raise KnownIssuesError(f"{path}: {e}") from None

    def match(self, signature: Signature | None, verdict: Verdict | None, program=None) -> Rule | None:
        """The first rule that matches the finding (of `program`, for rules that name one), or None. The
        searches of all the rules share one time budget (rule_regex.FILE_SECONDS)."""
        budget = Budget()
        for rule in self.rules:
            if rule.matches(signature, verdict, program, budget):
                return rule
        return None
