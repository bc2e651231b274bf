"""A corpus as one file of xfail tests that upstream can drop into its test
suite (`shapefuzz export-tests CORPUS -o FILE`): it needs torch and pytest only.

Each test is named for its entry (test_<key>) and names its bug: the title
and, when the entry's upstream record has one, the issue link, in the xfail
reason. Its body is the entry's short repro (fuzz/program/short_repro.py),
generated anew from the validated program and verdict, as a function: it
raises while the bug stands. The marks are `xfail(strict=True)`, so a test
that passes (the bug is fixed) is reported, and skipif on CUDA entries
where CUDA is missing.

Left out, each said why: entries without a short repro (torch_xla step
programs, recompiles, hangs: their check needs the judging loop), entries of
other devices than CPU and CUDA (torch_xla would need its own import and
device), crashes (they would kill the test process), entries that passed at
the last replay or whose short repro did not fail standalone, and the
set-aside unconfirmed/ entries (Corpus.entries skips them), and entries of a
module:attr backend whose module --allow-backend does not name (the test
would import it; shapefuzz's planted backends are allowed). Nothing stored
in an entry is copied into the file as code: text (title, link) enters as a
repr()'d string literal only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from fuzz.program.quoting import doc_text

_LINK = re.compile(r"https://github\.com/pytorch/(pytorch|xla)/(issues|pull)/[0-9]{1,9}")
_MAX_TITLE = 200

HEADER = '''"""Bugs shapefuzz found in torch.compile, as xfail tests: each test is one bug's short repro and
raises while the bug stands. strict=True: a test that passes is reported (XPASS(strict) fails), so a
fixed bug is noticed and its test can become a plain regression test.

{source}
Needs torch and pytest only.
"""
import pytest
import torch

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.fixture(autouse=True)
def fresh_compile_state():
    """Each test compiles from scratch and leaves the dynamo config as it found it."""
    config = torch._dynamo.config
    saved = config.get_config_copy()
    torch._dynamo.reset()
    yield
    for key, value in saved.items():
        if getattr(config, key) != value:
            setattr(config, key, value)
    torch._dynamo.reset()
'''


def _title(entry) -> str:
    from fuzz.findings.report.issue import entry_summary, report_title

    return report_title(entry.program, entry.verdict, entry_summary(entry))


def _link(entry) -> str | None:
    """The upstream issue a person (or a known-issues rule's record) tied the entry to, when it is a plain link."""
    rec = entry.meta.get("upstream")
    url = rec.get("url") if isinstance(rec, dict) else None
    return url if isinstance(url, str) and _LINK.fullmatch(url) else None


def left_out(entry) -> str | None:
    """Why an entry gets no test, or None."""
    from fuzz.judge.backends import not_allowed
    from fuzz.judge.verdict import Outcome
    from fuzz.program.short_repro import supported

    why = supported(entry.program, entry.verdict)
    if why:
        return f"no short repro: {why}"
    if entry.program.device_type() not in ("cpu", "cuda"):
        return f"a {entry.program.device_type()} entry (CPU and CUDA only)"
    refused = not_allowed(entry.program.settings.backend)
    if refused:  # the test would import the module a program names
        return refused
    if entry.verdict.outcome is Outcome.CRASH:
        return "a crash would kill the test process"
    last = entry.meta.get("last_replay")
    if isinstance(last, dict) and last.get("status") == "fixed":
        return "it passed at the last replay"
    short = entry.meta.get("short_repro")
    if isinstance(short, dict) and short.get("checked") and short.get("reproduces") is False:
        return "its short repro did not fail standalone"
    return None


def function_body(src: str) -> list[str]:
    """A straight-line script (its docstring dropped) as the lines of a function body. The text is indented
    as it is when that leaves its meaning unchanged (checked on the syntax tree: a string of several lines
    would change), else the tree is written out by ast.unparse."""
    tree = ast.parse(src)
    stmts = tree.body
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(getattr(stmts[0], "value", None), ast.Constant) \
            and isinstance(stmts[0].value.value, str):
        stmts = stmts[1:]
    if not stmts:
        return ["    pass"]
    lines = src.splitlines()[stmts[0].lineno - 1:]
    body = []
    for ln in lines:  # indented, runs of blank lines made one
        if ln.strip() or (body and body[-1]):
            body.append(("    " + ln) if ln.strip() else "")
    wrapped = ast.parse("def f():\n" + "\n".join(body) + "\n").body[0].body
    if [ast.dump(s) for s in wrapped] == [ast.dump(s) for s in stmts]:
        return body
    return ["    " + ln if ln.strip() else "" for ln in ast.unparse(ast.Module(body=stmts, type_ignores=[]))
            .splitlines()]


def entry_test(entry) -> str:
    """One test function for an entry that is not left out."""
    from fuzz.judge.verdict import Outcome
    from fuzz.program.short_repro import short_repro_source

    p, v = entry.program, entry.verdict
    title = " ".join(_title(entry).split())[:_MAX_TITLE]
    link = _link(entry)
    src = short_repro_source(p, v, title)
    name = "test_" + (entry.key if re.fullmatch(r"[0-9a-f]{1,40}", entry.key) else
                      re.sub(r"\W", "_", entry.key)[:40])
    reason = f"shapefuzz {entry.key}: {title}" + (f" ({link})" if link else "")
    doc = f"{title}. Seen: {v.outcome.value} at call {v.call}" + (f", {v.where}" if v.where else "") + "."
    raises = "" if v.outcome in (Outcome.COMPILED_ERROR, Outcome.CRASH) else ", raises=AssertionError"  # a check
    marks = [f"@pytest.mark.xfail(strict=True{raises}, reason={reason!r})"]
    if p.device_type() == "cuda":
        marks.append("@requires_cuda")
    return "\n".join(["", ""] + marks + [f"def {name}():", f"    {doc!r}"] + function_body(src)) + "\n"


def export(corpus_root) -> tuple[str, list[str], list[tuple[str, str]]]:
    """(the test file's text, the keys exported, [(key, why left out)])."""
    from fuzz.findings.store.corpus import Corpus

    corpus = Corpus(Path(corpus_root))
    parts, keys, skipped = [], [], []
    for e in corpus.entries():
        why = left_out(e)
        if why:
            skipped.append((e.key, why))
            continue
        parts.append(entry_test(e))
        keys.append(e.key)
    source = doc_text(f"Exported from {Path(corpus_root).name or corpus_root} by `shapefuzz export-tests`: "
                      f"{len(keys)} test(s), {len(skipped)} entr(ies) left out.")
    text = HEADER.format(source=source) + "".join(parts)
    compile(text, "exported_tests.py", "exec")  # a generator bug fails here, not in upstream's CI
    return text, keys, skipped
