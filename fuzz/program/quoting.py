"""Text taken from data (a case file's name, a signature, an error message)
as it may appear in generated Python: the generators quote values with
repr(), and put such text in docstrings and comments only through these."""

from __future__ import annotations


def doc_text(text: str) -> str:
    """`text` as one line that is inert inside a triple-quoted docstring or a
    comment: no newline, quote, backslash or control character can end it."""
    out = []
    for ch in str(text):
        if ch == '"':
            out.append('\\"')
        elif ch == "\\" or not ch.isprintable():
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)
