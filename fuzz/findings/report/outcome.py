"""What a report says went wrong, per outcome class: one sentence of what was
expected, one of what happened, and one line on why it matters to someone
using torch.compile. An input mutation is told as the input eager writes and
what compiled left in it, a recompile as the guard that failed, a stride
mismatch as the two strides, a divergence as the error against eager and
against the float64 reference.

Every piece of a verdict (where, message, numbers) is data from a corpus: it
reaches the text only through fuzz/findings/report/markdown.py."""

from __future__ import annotations

import re

from fuzz.findings.report import markdown as md
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.program.ir import Program

# The judge's per-dtype tolerance (fuzz/judge/compare.py TOLERANCES).
_TOL = {"float64": 1e-7, "float32": 1e-4, "float16": 1e-3, "bfloat16": 1e-2}

WHY = {
    Outcome.DIVERGENCE: "Nothing raises: the compiled model silently computes different numbers than eager.",
    Outcome.NONFINITE: "NaN/inf appear only under torch.compile and spread into everything computed from them "
                       "(a loss turns NaN).",
    Outcome.GRADIENT: "Training under torch.compile silently follows other gradients than eager.",
    Outcome.INPUT_MUTATION: "The caller's own tensor holds other data after the call: state updated in place "
                            "(buffers, caches, optimizer state) drifts from eager.",
    Outcome.STRIDE: "Code that relies on the layout behaves differently: a later .view() raises or an in-place op "
                    "on a view writes other elements, and .stride()/.is_contiguous() disagree with eager.",
    Outcome.SHAPE: "Code after the call gets a tensor of another shape: it fails there, or broadcasts silently.",
    Outcome.DTYPE: "Arithmetic after the call runs in another dtype: type promotion, precision and memory differ "
                   "from eager.",
    Outcome.RECOMPILE: "Every new size compiles again: the compile time is paid per size, and once the recompile "
                       "limit is hit the function falls back to eager.",
    Outcome.ALIASING: "An in-place update of the result writes the caller's own input (or another result) where "
                      "eager's result is a tensor of its own, or the other way round: one tensor is silently "
                      "two, or two are one.",
    Outcome.COMPILED_ERROR: "A program that runs in eager cannot be used under torch.compile.",
    Outcome.EAGER_ERROR: "Invalid input is accepted silently: the compiled function returns a result where eager "
                         "reports the error.",
    Outcome.CRASH: "The whole process dies: there is no Python exception to catch.",
    Outcome.HANG: "The compiled call never returns.",
}


def _fmt(x) -> str:
    return f"{x:.3g}" if isinstance(x, float) else md.text(x, 40)


def _thing(v: Verdict) -> str:
    """What the verdict names ("output 0", "input x1"), as text; its variable in parentheses dropped."""
    return md.text(re.sub(r"\s*\(.*\)$", "", v.where or "") or "the output", 80)


def _at(sizes: dict) -> str:
    """ " at s0=5" for the sizes worth naming (of symbolic dims), else ""."""
    return " at " + md.text(", ".join(f"{k}={n}" for k, n in sizes.items()), 200) if sizes else ""


def _tolerance_text(dtype: str | None) -> str:
    tol = _TOL.get(dtype or "")
    return f" (rtol=atol={tol:g} for {dtype})" if tol is not None else ""


def _first_line(text, limit: int = 300) -> str:
    line = next((ln.strip() for ln in str(text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def _said(v: Verdict, scrub) -> str:
    """ ": <the message's first line>" ending the sentence, or "." for an exception without a message."""
    line = _first_line(scrub(str(v.message or "")))
    return f": {md.text(line)}" + ("" if line.endswith(".") else ".") if line else "."


def _writers(p: Program) -> list[str]:
    """The in-place ops of p, as torch names."""
    from fuzz.program.opdb import OPS

    out = []
    for c in p.ops:
        if c.op in OPS and OPS[c.op].mutates:
            label = OPS[c.op].label(c.params)
            if label not in out:
                out.append(label)
    return out


# The judge's words for the value a mismatch through a threshold went wrong at (fuzz/judge/runner.py edge_note).
_THROUGH = re.compile(r"(?:; )?it comes through (\w+), which (.+?) reads: compiled \1 is further from a float64 "
                      r"run than eager's \(([^()]*)\)")


def expected_actual(p: Program, v: Verdict, *, sizes: dict | None = None, dtype: str | None = None,
                    scrub=lambda s: s) -> tuple[str, str]:
    """(expected, actual): one sentence each, in Markdown, for finding v of program p. `sizes`: the failing
    call's sizes worth naming (those of symbolic dims); `dtype`: the compared value's dtype; `scrub`: what takes the
    tool's own names out of a message. Where the judge named the value a threshold reads that compiled computes
    further from float64 than eager (the difference comes through it), the actual sentence says so."""
    m = _THROUGH.search(str(v.message or ""))
    if m is None:
        return _told(p, v, sizes, dtype, scrub)
    from dataclasses import replace

    expected, actual = _told(p, replace(v, message=_THROUGH.sub("", v.message)), sizes, dtype, scrub)
    return expected, (f"{actual} It comes through {md.code(m.group(1), 40)}, which {md.text(m.group(2), 80)} "
                      f"reads: compiled, that value is further from a float64 run than eager's "
                      f"({md.text(m.group(3), 200)}).")


def _told(p: Program, v: Verdict, sizes, dtype, scrub) -> tuple[str, str]:
    """expected_actual, of the verdict alone."""
    n = v.numbers if isinstance(v.numbers, dict) else {}
    thing, at = _thing(v), _at(sizes or {})
    o = v.outcome
    if o in (Outcome.DIVERGENCE, Outcome.GRADIENT) and "max_abs" in n:
        ref = ""
        if "compiled_vs_fp64" in n:
            ref = (f"; against a float64 run its RMS error is {_fmt(n['compiled_vs_fp64'])}, eager's "
                   f"{_fmt(n.get('eager_vs_fp64', '?'))}")
        return (f"Compiled {thing} equals eager's{_tolerance_text(dtype)}, as close to a float64 run as eager's.",
                f"Compiled {thing}{at} is up to {_fmt(n['max_abs'])} away from eager's (max abs error){ref}.")
    if o in (Outcome.DIVERGENCE, Outcome.GRADIENT) and "mismatched" in n:
        return (f"Compiled {thing} equals eager's exactly (an integer or bool dtype).",
                f"{_fmt(n['mismatched'])} of {_fmt(n.get('numel', '?'))} elements of compiled {thing}{at} differ "
                "from eager's.")
    if o is Outcome.INPUT_MUTATION:
        writers = _writers(p)
        how = (f"eager writes to it in place ({md.text(', '.join(writers), 200)})" if writers
               else "the program writes nothing to it")
        expected = f"After the call, {thing} holds what it holds after the eager call ({how})."
        if "max_abs" in n:
            actual = f"After the compiled call{at}, {thing} is up to {_fmt(n['max_abs'])} away from eager's."
        elif "mismatched" in n:
            actual = (f"After the compiled call{at}, {_fmt(n['mismatched'])} of {_fmt(n.get('numel', '?'))} "
                      f"elements of {thing} differ from eager's.")
        else:
            actual = f"After the compiled call{at}, {thing} differs from eager's: {md.text(scrub(v.message), 300)}."
        return expected, actual
    if o is Outcome.NONFINITE:
        return (f"Compiled {thing} has NaN/inf exactly where eager's has them.",
                f"Compiled {thing}{at} has NaN/inf at {_fmt(n.get('positions', '?'))} of "
                f"{_fmt(n.get('numel', '?'))} positions where eager's is finite.")
    if o is Outcome.STRIDE:
        m = re.match(r"strides (\([\d, ]*\)) vs eager (\([\d, ]*\))", str(v.message or ""))
        if m:
            return (f"Compiled {thing} has eager's strides {md.code(m.group(2))}.",
                    f"Compiled {thing}{at} has strides {md.code(m.group(1))}.")
        return (f"Compiled {thing} has eager's strides.",
                f"Compiled {thing}{at} has other strides: {md.text(scrub(v.message), 300)}.")
    if o in (Outcome.SHAPE, Outcome.DTYPE):
        what = "shape" if o is Outcome.SHAPE else "dtype"
        return (f"Compiled {thing} has eager's {what}.",
                f"Compiled {thing}{at} has another {what}: {md.text(scrub(v.message), 300)}.")
    if o is Outcome.RECOMPILE:
        guards = re.findall(r"failed guard: ([^;]*)", str(v.message or ""))
        guard = f"the guard {md.code(guards[0].strip(), 300)} failed" if guards else "no failed guard was recorded"
        return ("The call reuses the graph of an earlier call that differs from it only in dims marked dynamic "
                "(each of them >= 2).",
                f"The call{at} compiles a new graph: {guard}.")
    if o is Outcome.ALIASING:
        m = re.match(r"compiled returns (.*), eager (.*)$", str(v.message or ""))
        if m:
            return (f"Compiled {thing} is {md.text(m.group(2), 100)}, as eager's is.",
                    f"Compiled {thing}{at} is {md.text(m.group(1), 100)}.")
        return f"Compiled {thing} shares storage as eager's does.", f"{md.text(scrub(v.summary()), 300)}."
    if o is Outcome.COMPILED_ERROR and v.numbers.get("eager_error"):
        exc = md.code(v.exc_type or "an exception", 200)
        return (f"The compiled function raises the error eager raises ({md.text(v.where, 200)}).",
                f"It raises {exc}{at}{_said(v, scrub)}")
    if o is Outcome.COMPILED_ERROR:
        exc = md.code(v.exc_type or "an exception", 200)
        stage = {"compile": " while compiling", "execute": " while running the compiled code"}.get(
            getattr(v.stage, "value", ""), "")
        return ("The compiled function returns what eager returns (eager runs without error).",
                f"It raises {exc}{stage}{at}{_said(v, scrub)}")
    if o is Outcome.EAGER_ERROR:
        return (f"The compiled function raises {md.code(v.exc_type or 'an exception', 200)} as eager does"
                f"{_said(v, scrub)}", f"The compiled function returns a result{at}.")
    if o is Outcome.CRASH:
        return ("The compiled function returns what eager returns.",
                f"The process dies{at} ({md.text(v.exc_type or 'crash', 100)}).")
    if o is Outcome.HANG:
        return "The compiled function returns what eager returns.", f"The compiled call does not return{at}."
    return ("The compiled function returns what eager returns.",
            f"{md.text(scrub(v.summary()), 300)}.")
