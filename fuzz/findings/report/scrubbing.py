"""Reports are read by people who have never heard of the tool that found
the bug: `scrub` takes the tool's temp dirs, module paths and names out of a
message or a path (a custom `module:attr` backend aside, which the repro must
import by name)."""

from __future__ import annotations

import re

_SCRUB = [
    (re.compile(r"[\w./\\-]*shapefuzz-inductor-\w+"), "/tmp/torchinductor_cache"),
    (re.compile(r"<shapefuzz-[0-9a-f]+>"), "repro.py"),
    (re.compile(r"\bshapefuzz_program\b"), "__main__"),
    (re.compile(r"(?:[\w.-]*/)*fuzz/(\w+)\.py"), r"<path>/\1.py"),
    (re.compile(r"[\w./\\-]*shapefuzz[\w./\\-]*", re.I), "<path>"),
    (re.compile(r"'?\bfuzz(?:\.\w+)+(?::\w+)?'?"), "<custom backend>"),
]


def scrub(text: str) -> str:
    """Text with the tool's own temp dirs, module paths and names replaced."""
    for pat, rep in _SCRUB:
        text = pat.sub(rep, text)
    return text
