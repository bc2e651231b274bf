"""The one way text from data reaches a terminal (fuzz/findings/report/markdown.py
is the one way it reaches Markdown).

A verdict's exc_type, a message, a config value, a rule's URL can hold
anything; printed as it is, an escape sequence would drive the terminal (move
the cursor, retitle the window, rewrite what was printed) and rich markup
would be read as styling (an unbalanced tag aborts the print). Every such
field goes through one of these:

    plain(s)    control characters shown as escapes (\\x1b, \\u202e): C0 but
                tab and newline, DEL, C1, the bidi controls and the line and
                paragraph separators; one_line=True shows newlines too
    markup(s)   plain(s) with rich's markup escaped: for text handed to rich

The CLI also runs every line it prints through `plain` (fuzz/cli/__init__.py),
so a field a command forgot is shown escaped, never obeyed; rich's own output
(tables, progress) goes to the real stream.
"""

from __future__ import annotations

import re

# C0 but \t and \n, DEL, C1; the bidi embeddings, overrides and isolates; the marks; the separators
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_CONTROL_NL = re.compile(_CONTROL.pattern[:-1] + "\n\t]")


def _escape(m: re.Match) -> str:
    c = m.group(0)
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def plain(s, one_line: bool = False) -> str:
    """`s` as text that cannot drive a terminal: each control character shown as its escape."""
    return (_CONTROL_NL if one_line else _CONTROL).sub(_escape, str(s))


def markup(s, one_line: bool = False) -> str:
    """`s` for rich: plain(s) with rich's markup escaped, so `[/]` or `[link=...]` is shown, never read."""
    from rich.markup import escape

    return escape(plain(s, one_line))


class PlainStream:
    """A text stream whose writes go through plain(): what the CLI prints on stdout and stderr."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text) -> int:
        self._stream.write(plain(text))
        return len(text)

    @property
    def raw(self):
        """The stream itself (rich's own styling goes there)."""
        return self._stream

    def __getattr__(self, name):
        return getattr(self._stream, name)


def raw(stream):
    """The stream under a PlainStream (itself otherwise): where rich writes its own escape sequences."""
    return getattr(stream, "raw", stream) if isinstance(stream, PlainStream) else stream
