"""The one way text from data reaches Markdown (report.md, BUGS.md).

A corpus comes from other people: a verdict's `where`, an exception message,
a meta field can hold anything. Reports are read by maintainers and by
upstream's triage bots, so nothing from data may open a heading, a code fence,
a table cell, a link or an HTML tag. Every field goes through one of these:

    text(s)    prose or a table cell: one line, HTML entities, Markdown
               punctuation backslash-escaped, control characters dropped,
               bare URLs and addresses defanged ("https[:]//x", "www[.]x",
               "a[@]b": GitHub makes a live link of them otherwise)
    code(s)    an inline code span whose fence outruns any backticks in s
    block(s)   a fenced code block whose fence outruns any backtick run in s
"""

from __future__ import annotations

import re

# What GitHub's Markdown gives meaning to inside a line: emphasis, code, links and images, tables,
# strikethrough, HTML, issue references (#12) and mentions (@name). A backslash before ASCII punctuation
# is a literal in CommonMark. What means something only at a line's start (a list, a heading) is below.
_PUNCT = re.compile(r"([\\`*_\[\]!|~<>#@])")
_LINE_START = re.compile(r"^(\s*)(?:([-+=])|(\d+)([.)]))")
# C0 but tab and newline, DEL, C1, the bidi embeddings, overrides, isolates and marks, the separators
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
# What GitHub's extended autolinks start at: a scheme's "://", "www.", an address's "@" between word characters
_AUTOLINK = re.compile(r"(?i)(?<![a-z0-9])(https?|ftp|mailto):(?=//)|(?<![a-z0-9])(www)\.|(?<=[\w.+-])@(?=[\w-])")
_NEWLINES = re.compile(r"[\r\n\t]+")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
MAX_INLINE = 2000  # a field longer than this is cut: a report line is for reading


def _one_line(s, limit: int) -> str:
    s = _NEWLINES.sub(" ", str(s))
    s = _CONTROL.sub("", s)
    return s if len(s) <= limit else s[:limit] + "..."


def text(s, limit: int = MAX_INLINE) -> str:
    """`s` as literal text on one line: safe in prose and in a table cell."""
    s = _one_line(s, limit)
    s = _AUTOLINK.sub(_defang, s)
    s = "".join(_HTML.get(c, c) for c in s)
    # entities first (their & and ; are not Markdown punctuation), then the punctuation itself,
    # but not inside the entities just written
    s = re.sub(r"(&(?:amp|lt|gt|quot);)|" + _PUNCT.pattern, lambda m: m.group(1) or "\\" + m.group(2), s)
    return _LINE_START.sub(lambda m: m.group(1) + ("\\" + m.group(2) if m.group(2) else m.group(3) + "\\" + m.group(4)), s)


def _defang(m: re.Match) -> str:
    if m.group(1):
        return m.group(1) + "[:]"
    return m.group(2) + "[.]" if m.group(2) else "[@]"


def code(s, limit: int = MAX_INLINE) -> str:
    """`s` as an inline code span on one line (a table cell's pipes escaped too)."""
    s = _one_line(s, limit)
    run = max((len(r) for r in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    # a pipe ends a table cell even inside a code span (GFM); its escape is dropped inside the span
    return f"{fence}{pad}{s.replace('|', chr(92) + '|')}{pad}{fence}"


def block(s, lang: str = "") -> str:
    """`s` as a fenced code block: the fence is longer than any backtick run in `s`."""
    s = _CONTROL.sub("", str(s).replace("\r\n", "\n").replace("\r", "\n"))
    run = max((len(r) for r in re.findall(r"`{3,}", s)), default=2)
    fence = "`" * (run + 1)
    if not re.fullmatch(r"[A-Za-z0-9_+-]{0,20}", lang):
        lang = ""
    return f"{fence}{lang}\n{s.rstrip(chr(10))}\n{fence}"
