"""The short repro of a finding: a straight-line script a maintainer reads in
half a minute, as upstream fuzzer reports are written.

It holds the imports, the program as a function, torch.compile with the
program's settings, the inputs as one-line seeded calls (`torch.manual_seed(n)`
then `torch.randn(2, 3)`: the very values the judge drew from its generator
seeded n, with the layout and the marks), and one plain check of what went
wrong: the call itself (an exception or a crash), torch.testing.assert_close
at the judge's tolerance (values, shapes, dtypes, an input mutated), a stride
comparison, or a recompile raised by `torch._dynamo.config.error_on_recompile`.
A failing call after the first is reached by a loop over the schedule's calls
up to it. No helper of the judging harness (make, make_inputs, generators)
appears. It exits 1 (an uncaught exception) while the bug stands and 0 once it
is fixed.

Eager and compiled share the inputs unless the program writes to them; then
eager gets exact clones, or (a view, an offset, a leaf) inputs made again from
the same seed. A program with a backward pass makes its floating inputs leaves
that require grad and takes the gradients of the judge's loss (sum of out**2 /
2). Hangs and eager-only errors get None: they need the full harness
(codegen.repro_source), generated on demand; their entry's repro.py says how
(fuzz/findings/store/scripts.py). `check_short_repro` runs a short repro in a fresh
process and says whether it fails the way the verdict did.
"""

from __future__ import annotations

import math
import re

from fuzz.devices import is_cuda
from fuzz.judge.backends import backend, compile_kwargs, ModeOptions
from fuzz.judge.by_design import rounding_edges
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.program.codegen import mark_lines, program_lines
from fuzz.program.ir import Program
from fuzz.program.layouts import alias_lines, input_expr
from fuzz.program.opdb import OPS
from fuzz.program.quoting import doc_text

# The judge's per-dtype tolerance (fuzz/judge/compare.py TOLERANCES), as text.
_TOL = {"float64": 1e-7, "float32": 1e-4, "float16": 1e-3, "bfloat16": 1e-2}
_RAISES = (Outcome.COMPILED_ERROR, Outcome.CRASH)
_COMPARED = (Outcome.DIVERGENCE, Outcome.NONFINITE, Outcome.SHAPE, Outcome.DTYPE, Outcome.INPUT_MUTATION,
             Outcome.STRIDE, Outcome.GRADIENT, Outcome.ALIASING)
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
    if v.outcome not in _RAISES + _COMPARED + (Outcome.RECOMPILE,):
        return f"a {v.outcome.value} finding needs the judging loop"
    if v.call is None:
        return "the verdict names no failing call"
    if v.outcome in _COMPARED and _index(p, v) is None:
        return f"the verdict does not say which output or input ({v.where!r})"
    if v.outcome is Outcome.COMPILED_ERROR and v.numbers.get("eager_error"):
        return "eager raises too (another error class): the judging loop compares the two"
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
    """The lines after the compiled call that show the failure (an input by its name: the compiled call's copy)."""
    if v.outcome in _RAISES:
        if p.settings.backward and v.where == "backward":
            return ["grads(actual, inputs)  # the compiled backward raises"]
        return []  # the compiled call above raises (or the process dies): that is the bug
    kind, i = _index(p, v)
    if kind == "input":
        got, want = p.inputs[i].name, f"eager_inputs[{i}]"
    elif kind == "gradient":
        got, want = f"grads(actual, inputs)[{i}]", f"grads(expected, eager_inputs)[{i}]"
    else:
        got, want = f"actual[{i}]", f"expected[{i}]"
    what = f"{v.outcome.value} at {kind} {i}"
    if v.outcome is Outcome.ALIASING:
        return _alias_check(p, i, what)
    if v.outcome is Outcome.STRIDE:
        return [f"strides = [[s for s, n in zip(t.stride(), t.shape) if n > 1] for t in ({got}, {want})]",
                f"assert strides[0] == strides[1], f\"{FAIL_MARK} {what}: compiled {{strides[0]}}, eager {{strides[1]}}\""]
    tol = _tolerance(p)
    return [f"torch.testing.assert_close({got}, {want}, rtol={tol!r}, atol={tol!r}, equal_nan=True,",
            f"                           msg=lambda m: f\"{FAIL_MARK} {what}: {{m}}\")"]


def _alias_check(p: Program, i: int, what: str) -> list[str]:
    """Lines asserting that output i shares storage with the inputs (then the earlier outputs) eager's output i
    shares it with, by position: compiled and eager get inputs of their own where the program writes them."""
    names = f"[{', '.join(x.name for x in p.inputs)}]"
    eager = names if not (_mutates(p) or p.settings.backward) else "list(eager_inputs)"
    return ["def sharing(t, among):",
            "    \"\"\"Positions in `among` of the tensors on t's storage (none for an empty tensor).\"\"\"",
            "    key = lambda u: u.untyped_storage().data_ptr() if isinstance(u, torch.Tensor) and u.numel() else None",
            "    return [j for j, u in enumerate(among) if key(t) is not None and key(u) == key(t)][:1]",
            "",
            f"got = sharing(actual[{i}], {names} + list(actual[:{i}]))",
            f"want = sharing(expected[{i}], {eager} + list(expected[:{i}]))",
            f"assert got == want, (f\"{FAIL_MARK} {what}: compiled shares the storage of {{got}}, eager of {{want}} \"",
            f"                     \"(positions among the {len(p.inputs)} input(s), then the outputs before it)\")"]


def _tolerance(p: Program) -> float:
    """The loosest tolerance of the program's floating input dtypes (the judge's, by dtype)."""
    tols = [_TOL[x.dtype] for x in p.inputs if x.dtype in _TOL]
    return max(tols) if tols else 1e-4


def _mutates(p: Program) -> bool:
    """Whether running p may write to its inputs: it has an in-place op (an alias alone writes nothing)."""
    return any(OPS[c.op].mutates for c in p.ops if c.op in OPS)


def _creation(x, dims: str, device: str) -> str:
    """torch.randn/randint for input x of literal shape `dims` ("(2, 3)"), seeded by the default generator as the
    judge seeded its own: `torch.manual_seed(n); torch.randn(shape)` draws what
    `torch.randn(shape, generator=torch.Generator().manual_seed(n))` draws."""
    inner = dims[1:-1].rstrip(",") or "()"
    if x.dtype in _TOL:
        expr = f"torch.randn({inner})" if x.scale == 1.0 else f"(torch.randn({inner}) * {x.scale!r})"
        expr += "" if x.dtype == "float32" else f".to(torch.{x.dtype})"
    elif x.dtype == "bool":
        expr = f"torch.randint(0, 2, {dims}).bool()"
    else:
        expr = f"torch.randint(-8, 9, {dims})" + ("" if x.dtype == "int64" else f".to(torch.{x.dtype})")
    return expr + (f".to({device!r})" if device != "cpu" else "")


def _dims_at(x, p: Program, call: int | None) -> list:
    """x's shape at `call` (ints), or with its size symbols as names (call None: the body of a loop over calls)."""
    if call is None:
        return list(x.shape)
    return [p.sizes[d][call] if isinstance(d, str) else d for d in x.shape]


def _one_input(x, p: Program, call: int | None, device: str) -> str:
    """`name = expr` making input x at `call` (None: inside the loop over calls) with its layout."""
    if x.alias is not None:
        line = alias_lines(x)[0].strip()
        calls = x.alias.get("calls")
        if calls is not None and call is None:
            line += f" if {[bool(c) for c in calls]!r}[call] else {line.split(' = ', 1)[1]}.clone()"
        elif calls is not None and not (calls[call] if call < len(calls) else True):
            line += ".clone()"  # this call: a copy of the view, not an alias
        return line
    shape = _dims_at(x, p, call)
    expr = input_expr(x, shape, "\0")
    m = re.match(r"make\((.*?), \x00\)(.*)$", expr, re.S)
    dims, rest = m.group(1), m.group(2)
    if call is not None and x.layout == "overlapping":  # the storage's size, worked out
        dims = f"({1 + sum(max(n - 1, 0) for n in shape)},)"
    elif call is not None and x.layout == "offset":
        dims = f"({x.offset + math.prod(shape)},)"
    return f"{x.name} = {_creation(x, dims, device)}{rest}"


def _inputs_at(p: Program, call: int | None, device: str, marks: bool) -> list[str]:
    """The lines making every input of `call` (None: in the loop over calls, `call` the loop's variable), seeded
    as the judge did, and marking its dims when `marks`."""
    seed = repr(p.seed * 1000 + call) if call is not None else (f"{p.seed * 1000!r} + call" if p.seed else "call")
    lines = [f"torch.manual_seed({seed})"]
    for x in p.inputs:
        lines.append(_one_input(x, p, call, device))
        if p.settings.backward and x.dtype in _TOL and x.alias is None:  # a leaf with its layout
            lines.append(f"{x.name} = {x.name}.detach().requires_grad_()")
    if marks:
        lines += [ln.strip() for ln in mark_lines(p)]
    return lines


def _loop_head(p: Program, calls: int) -> str:
    """`for ...:` over the first `calls` calls of the schedule, binding the size symbols."""
    used = {d for x in p.inputs for d in x.shape if isinstance(d, str)}
    syms = [s for s in p.sizes if s in used]  # a symbol no shape names would be an unused loop variable
    if not syms:
        return f"for call in range({calls}):"
    rows = [tuple(p.sizes[s][c] for s in syms) for c in range(calls)]
    if len(syms) == 1:
        return f"for call, {syms[0]} in enumerate({[r[0] for r in rows]!r}):"
    return f"for call, ({', '.join(syms)}) in enumerate({rows!r}):"


def _clone_safe(p: Program) -> bool:
    """Whether .clone() copies every input exactly, strides included (dense, no offset, no alias)."""
    return all(x.alias is None and x.layout in ("contiguous", "transposed", "permuted", "channels_last")
               for x in p.inputs)


def _call_lines(p: Program, v: Verdict, call: int | None, device: str) -> list[str]:
    """One call of the schedule (`call` None: the body of the loop over calls): its inputs, the eager and the
    compiled call, and the check of what went wrong (it passes at the calls before the failing one)."""
    names = ", ".join(x.name for x in p.inputs)
    now = _inputs_at(p, call, device, marks=True)
    backward = p.settings.backward
    if v.outcome in _RAISES:  # the compiled call raises (or the process dies), or its backward does
        return now + ([f"compiled({names})"] if not backward or v.where != "backward" else
                      [f"actual = compiled({names})", f"inputs = [{names}]"] + _check_lines(p, v))
    if not (_mutates(p) or backward or (_index(p, v) or ("",))[0] == "input"):  # one set of inputs serves both
        lines = now + [f"expected = program({names})", f"actual = compiled({names})"]
    elif _clone_safe(p) and not backward:  # .clone() copies them exactly, strides included
        lines = now + [f"eager_inputs = [{', '.join(x.name + '.clone()' for x in p.inputs)}]",
                       "expected = program(*eager_inputs)", f"actual = compiled({names})"]
    else:  # made again: a view, an offset or a leaf must be as the judge made it
        lines = _inputs_at(p, call, device, marks=False) + [f"eager_inputs = [{names}]",
                                                            "expected = program(*eager_inputs)"]
        lines += now + [f"actual = compiled({names})"] + ([f"inputs = [{names}]"] if backward else [])
    return lines + _check_lines(p, v)


def short_repro_source(p: Program, v: Verdict, title: str = "", device: str | None = None) -> str | None:
    """The short repro of finding v of program p (shrunk), or None when it
    needs the full harness (see `supported`). `device`: run it there instead
    of the program's device (a CUDA finding the ablation reproduced on CPU)."""
    if supported(p, v):
        return None
    fail, device = v.call, device or p.settings.device
    imports, compile_expr = _compile_expr(p)
    check = _check_lines(p, v) if v.outcome is not Outcome.RECOMPILE else []
    body = program_lines(p) + (_GRADS if any("grads(" in ln for ln in check) else [])
    uses_f = any("F." in ln for ln in body)
    names = ", ".join(x.name for x in p.inputs)
    seen = f"{v.outcome.value} at call {fail}" + (f", {v.where}" if v.where else "")
    head = [f'"""{doc_text(title or "repro")}', "",
            doc_text(f"Seen: {seen}. Exits 1 while the bug stands, 0 once it is fixed."), '"""',
            "import torch"] + (["import torch.nn.functional as F"] if uses_f else []) + imports + ["", ""]
    run = ["", ""] + [f"torch._dynamo.config.{k} = {val!r}" for k, val in sorted(p.settings.dynamo.items())]
    run.append(f"compiled = {compile_expr}")
    if v.outcome is Outcome.RECOMPILE:  # the earlier calls, then the one that should reuse their graph
        if fail == 1:
            run += _inputs_at(p, 0, device, marks=True) + [f"compiled({names})"]
        elif fail:
            run += [_loop_head(p, fail)] + [f"    {ln}" for ln in _inputs_at(p, None, device, True)]
            run.append(f"    compiled({names})")
        run.append("torch._dynamo.config.error_on_recompile = True  # the call below should reuse a graph above")
        run += _inputs_at(p, fail, device, marks=True) + [f"compiled({names})"]
    elif fail == 0:
        run += _call_lines(p, v, 0, device)
    else:  # every call of the schedule up to the failing one: the compiled function has seen those sizes
        each = _call_lines(p, v, None, device)
        if rounding_edges(p)[0] and v.outcome not in _RAISES:
            # an earlier call may differ only where rounding decides at a threshold, which the judge passes
            cut = len(each) - len(_check_lines(p, v))
            each = each[:cut] + [f"if call == {fail}:"] + [f"    {ln}" for ln in each[cut:]]
        run += [_loop_head(p, fail + 1)] + [f"    {ln}" for ln in each]
    if is_cuda(device) and v.outcome in _RAISES:
        run.append("torch.cuda.synchronize()  # a kernel's asynchronous error surfaces here")
    return "\n".join(head + body + run) + "\n"


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
    if v.outcome is Outcome.RECOMPILE:  # error_on_recompile raised at the call that should reuse a graph
        return "RecompileError" in err, f"it raised {last[:300]}" if last else "it did not recompile"
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
    # a zygote's answer is kept only where it fails as v did: any other runs again in a fresh process
    rc, out, err = run_script(src, timeout=timeout, python=python, env=env,
                              accept=lambda rc, out, err: failure_matches(v, rc, out, err)[0])
    ok, shown = failure_matches(v, rc, out, err)
    if not ok and err.strip():
        shown += " | stderr: " + " / ".join(ln.strip() for ln in err.strip().splitlines()[-6:])[:600]
    return ok, shown, time.monotonic() - start
