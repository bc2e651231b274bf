"""The short repro of a finding: a straight-line script a maintainer reads in
half a minute, as upstream fuzzer reports are written.

It holds the imports, the program as a function, its inputs at the calls of
the shrunk schedule up to the failing one (seeded exactly as the judge made
them, marks included), torch.compile with the program's settings, and one
plain check of what went wrong: the call itself (an exception or a crash),
torch.testing.assert_close at the judge's tolerance (values, shapes, dtypes,
an input mutated), or a stride comparison. It exits 1 (an uncaught
exception) while the bug stands and 0 once it is fixed.

A program with a backward pass makes its floating inputs leaves that require
grad and takes the gradients of the judge's loss (sum of out**2 / 2), so an
error of the backward raises there and wrong gradients are compared. Findings
whose check needs the judging loop (recompiles, hangs, eager-only errors)
get None: they need the full harness (codegen.repro_source), generated on demand; their entry's repro.py
says how (fuzz/findings/scripts.py). `check_short_repro` runs a short repro in a fresh process and says
whether it fails the way the verdict did.
"""

from __future__ import annotations

import re

from fuzz.judge.backends import backend, compile_kwargs, ModeOptions
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.program.codegen import mark_lines, program_lines
from fuzz.program.ir import Program
from fuzz.program.layouts import alias_lines, input_expr
from fuzz.program.quoting import doc_text

# The judge's per-dtype tolerance (fuzz/judge/compare.py TOLERANCES), as text.
_TOL = {"float64": 1e-7, "float32": 1e-4, "float16": 1e-3, "bfloat16": 1e-2}
_RAISES = (Outcome.COMPILED_ERROR, Outcome.CRASH)
_COMPARED = (Outcome.DIVERGENCE, Outcome.NONFINITE, Outcome.SHAPE, Outcome.DTYPE, Outcome.INPUT_MUTATION,
             Outcome.STRIDE, Outcome.GRADIENT)
_GRADS = ["", "",
          "def grads(outputs, inputs):",
          "    \"\"\"Gradients of sum(out**2)/2 (as the judge takes them) for each input that requires grad.\"\"\"",
          "    loss = sum(((o if o.dtype == torch.float64 else o.float()) ** 2).sum() / 2",
          "               for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad)",
          "    return torch.autograd.grad(loss, [t for t in inputs if t.requires_grad], allow_unused=True)"]
FAIL_MARK = "compiled vs eager,"  # the check's message starts with it and the outcome (no tool name: upstream reads it)


def supported(p: Program, v: Verdict) -> str | None:
    """Why the finding needs the full harness, or None when a short repro shows it."""
    if not isinstance(p, Program):
        return "torch_xla step programs keep their harness"
    if v.outcome not in _RAISES + _COMPARED:
        return f"a {v.outcome.value} finding needs the judging loop"
    if v.call is None:
        return "the verdict names no failing call"
    if v.outcome in _COMPARED and _index(p, v) is None:
        return f"the verdict does not say which output or input ({v.where!r})"
    return None


def _index(p: Program, v: Verdict):
    """(kind, index) of the value the verdict names: "output 1", "input x0", "gradient of x1" (an index
    among the inputs that require grad)."""
    m = re.match(r"\s*(output|input)\s+(\w+)", v.where or "")
    names = [x.name for x in p.inputs]
    if m and m.group(2).isdigit():
        return m.group(1), int(m.group(2))
    if m and m.group(1) == "input" and m.group(2) in names:
        return "input", names.index(m.group(2))
    m = re.match(r"\s*gradient of (\w+)", v.where or "")
    leaves = [x.name for x in p.inputs if x.alias is None and x.dtype in _TOL]
    return ("gradient", leaves.index(m.group(1))) if m and m.group(1) in leaves else None


def _sizes_lines(p: Program, upto: int) -> list[str]:
    lines = []
    for sym, values in p.sizes.items():
        vals = values[:upto + 1]
        lines.append(f"    {sym} = {vals[0]!r}" if len(set(vals)) == 1 else f"    {sym} = {vals!r}[call]")
    return lines


def _input_lines(p: Program) -> list[str]:
    lines = []
    for x in p.inputs:
        if x.alias is not None:
            lines += alias_lines(x)
            continue
        lines.append(f"    {x.name} = {input_expr(x, list(x.shape), f'torch.{x.dtype}, {x.scale!r}, g')}")
        if p.settings.backward and x.dtype in _TOL:  # a leaf with its layout: gradients flow to it
            lines.append(f"    {x.name} = {x.name}.detach().requires_grad_()")
    return lines


def _compile_expr(p: Program) -> tuple[list[str], str]:
    """(import lines, torch.compile(...)) with only the settings that differ from its defaults."""
    imports, backend_expr = backend(p.settings.backend).repro_backend()
    kw = [f"backend={backend_expr}"]
    for k, v in compile_kwargs(p.settings).items():
        if k == "dynamic" and v is None:
            continue
        kw.append(f"{k}={v.source() if isinstance(v, ModeOptions) else repr(v)}")
    return imports, f"torch.compile(program, {', '.join(kw)})"


def _check_lines(p: Program, v: Verdict) -> list[str]:
    """The lines after the compiled call that show the failure."""
    if v.outcome in _RAISES:
        if p.settings.backward and v.where == "backward":
            return ["grads(actual, inputs)  # the compiled backward raises"]
        return []  # the compiled call above raises (or the process dies): that is the bug
    kind, i = _index(p, v)
    got, want = {"output": ("actual", "expected"), "input": ("inputs", "eager_inputs"),
                 "gradient": ("grads(actual, inputs)", "grads(expected, eager_inputs)")}[kind]
    what = f"{v.outcome.value} at {kind} {i}"
    if v.outcome is Outcome.STRIDE:
        return [f"strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in ({got}[{i}], {want}[{i}])]",
                f"assert strides[0] == strides[1], f\"{FAIL_MARK} {what}: compiled {{strides[0]}}, eager {{strides[1]}}\""]
    tol = _tolerance(p)
    return [f"torch.testing.assert_close({got}[{i}], {want}[{i}], rtol={tol!r}, atol={tol!r}, equal_nan=True,",
            f"                           msg=lambda m: f\"{FAIL_MARK} {what}: {{m}}\")"]


def _tolerance(p: Program) -> float:
    """The loosest tolerance of the program's floating input dtypes (the judge's, by dtype)."""
    tols = [_TOL[x.dtype] for x in p.inputs if x.dtype in _TOL]
    return max(tols) if tols else 1e-4


def short_repro_source(p: Program, v: Verdict, title: str = "") -> str | None:
    """The short repro of finding v of program p (shrunk), or None when it
    needs the full harness (see `supported`)."""
    if supported(p, v):
        return None
    fail = v.call
    imports, compile_expr = _compile_expr(p)
    body = program_lines(p)
    uses_f = any("F." in ln for ln in body)
    names = ", ".join(x.name for x in p.inputs)
    head = [f'"""{doc_text(title or "repro")}', "",
            doc_text(f"Expected: compiled and eager agree. Seen: {v.outcome.value} at call {fail}"
                     + (f", {v.where}" if v.where else "") + ". Exits 1 while the bug stands."),
            '"""', "import torch"] + (["import torch.nn.functional as F"] if uses_f else []) + imports
    make = ["", f"DEVICE = {p.settings.device!r}", "", "", "def make(shape, dtype, scale, g):"]
    if all(x.dtype in _TOL for x in p.inputs):  # floats only: the judge's normal values
        make.append("    return (torch.randn(shape, generator=g) * scale).to(dtype).to(DEVICE)")
    else:
        make += ["    if dtype.is_floating_point:",
                 "        t = (torch.randn(shape, generator=g) * scale).to(dtype)",
                 "    elif dtype == torch.bool:",
                 "        t = torch.randint(0, 2, shape, generator=g).bool()",
                 "    else:",
                 "        t = torch.randint(-8, 9, shape, generator=g).to(dtype)",
                 "    return t.to(DEVICE)"]
    make += ["", "",
            "def make_inputs(call):",
            "    \"\"\"The inputs of one call: seeded random values, with the dims marked dynamic as in the case.\"\"\""]
    make += _sizes_lines(p, fail)
    make.append(f"    g = torch.Generator().manual_seed({p.seed * 1000!r} + call)")
    make += _input_lines(p) + mark_lines(p) + [f"    return [{names}]", "", ""]
    body = body + (_GRADS if p.settings.backward else [])
    run = ["", ""]
    run += [f"torch._dynamo.config.{k} = {val!r}" for k, val in sorted(p.settings.dynamo.items())]
    run.append(f"compiled = {compile_expr}")
    if fail:
        run += [f"for call in range({fail}):  # the earlier calls of the schedule", "    compiled(*make_inputs(call))"]
    run += [f"eager_inputs = make_inputs({fail})", "expected = program(*eager_inputs)",
            f"inputs = make_inputs({fail})", "actual = compiled(*inputs)"]
    if p.device_type() == "cuda" and v.outcome in _RAISES:
        run.append("torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here")
    run += _check_lines(p, v)
    return "\n".join(head + make + body + run) + "\n"


def code_lines(src: str) -> int:
    """Lines of code: not blank, not a comment, not inside the docstring."""
    n, in_doc = 0, False
    for ln in src.splitlines():
        s = ln.strip()
        if in_doc or s.startswith('"""'):
            if s.count('"""') == 1:  # opens or closes a docstring of several lines
                in_doc = not in_doc
            continue
        if s and not s.startswith("#"):
            n += 1
    return n


def _masked(text: str) -> str:
    from fuzz.findings.signature import normalize_message  # lazy: the findings package sits above this one

    return normalize_message(text)


def failure_matches(v: Verdict, rc: int | None, out: str, err: str) -> tuple[bool, str]:
    """Whether a short repro's run (exit status, stdout, stderr) fails as verdict v
    did, and what it showed: an exception of v's type whose masked message
    holds v's, death by v's signal, or the check's failure of v's outcome."""
    lines = err.splitlines()
    starts = [i for i, ln in enumerate(lines) if re.match(r"^[\w.]+(Error|Exception|Failed)\b", ln)]
    # each raised exception's text: from its "Type: message" line to the next traceback
    blocks = ["\n".join(lines[i:next((j for j in range(i + 1, len(lines)) if lines[j].startswith("Traceback")),
                                     len(lines))]) for i in starts]
    last = lines[starts[-1]] if starts else ""
    if rc is None:
        return False, "it ran past the time limit"
    if rc == 0:
        return False, "it passed (exit 0)"
    if v.outcome is Outcome.CRASH:
        from fuzz.judge.isolated import signal_name

        shown = signal_name(-rc) if rc < 0 else f"exit {rc}"
        return shown == v.exc_type or (rc < 0 and not v.exc_type), f"it died with {shown}"
    if rc != 1:
        return False, f"it exited {rc}: {last or err[-300:]}"
    if v.outcome is Outcome.COMPILED_ERROR:
        exc = (v.exc_type or "").rsplit(".", 1)[-1]
        want = _masked(v.message)
        same = any(exc and re.search(rf"\b{re.escape(exc)}\b", b.split("\n", 1)[0]) and
                   (want in ("", "-") or want[:120] in _masked(b)) for b in blocks)
        # or one line naming the type and holding the message (a wrapper may print the cause on its own line)
        same = same or any(exc and exc in ln and want not in ("", "-") and want[:120] in _masked(ln.strip())
                           for ln in lines)
        return same, f"it raised {last[:300]}" if last else "it raised no exception of its type"
    mark = f"{FAIL_MARK} {v.outcome.value} at "
    return mark in err, f"its check failed: {last[:300]}" if last else "its check did not fail"


def check_short_repro(src: str, v: Verdict, *, timeout: float = 600.0, python: str | None = None,
                      env: dict | None = None) -> tuple[bool, str, float]:
    """Run short repro `src` standalone in a fresh process (a scratch dir, empty compile caches) and
    say whether it fails as v did: (matches, what it showed, seconds). What it
    showed ends with its stderr's last lines when it does not match."""
    import time

    from fuzz.judge.isolated import run_script

    start = time.monotonic()
    rc, out, err = run_script(src, timeout=timeout, python=python, env=env)
    ok, shown = failure_matches(v, rc, out, err)
    if not ok and err.strip():
        shown += " | stderr: " + " / ".join(ln.strip() for ln in err.strip().splitlines()[-6:])[:600]
    return ok, shown, time.monotonic() - start
