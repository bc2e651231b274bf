"""Issue-ready markdown for a corpus entry.

`render_report(entry)` follows PyTorch's torch.compile bug-report template
(🐛 Describe the bug / Error logs / Versions) and, for torch_xla findings
(backend "openxla"), PyTorch/XLA's (🐛 Bug / To Reproduce / Expected behavior
/ Environment / Additional context). It holds a short specific title, one
paragraph of description, the entry's standalone repro.py inline, observed vs
expected numbers (or the error and its torch frames), the ablation table when
the entry has ablation.json, the torch releases it affects (`shapefuzz
versions`), a suggested duplicate search (the masked message and the key
frame), and the environment as `python -m torch.utils.collect_env` prints it
without its noise (run once per process; env.json when it cannot run or when
the installed torch is not the one of the finding). Its last line is a
comment naming the program it describes: `replay` flags a report whose entry's
program has changed since.

A report is read by people who have never heard of the tool that found the
bug: nothing in it names the tool, its modules or its types. Messages and
paths are scrubbed of the tool's temp-dir and file names; the only exception
is a custom `module:attr` backend, which the repro must import by name.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

from fuzz.findings.report_parts import affected_text, duplicate_search, program_stamp
from fuzz.findings.trace import trace_text
from fuzz.program.ir import Program
from fuzz.judge.backends import BACKENDS
from fuzz.judge.verdict import Outcome, Stage, Verdict

_ERROR_LOG_LINES = 60
_MARK_API = {"dynamic": "torch._dynamo.mark_dynamic", "maybe_dynamic": "torch._dynamo.maybe_mark_dynamic",
             "unbacked": "torch._dynamo.decorators.mark_unbacked"}
_MARK_PHRASE = {"unbacked": "an unbacked (mark_unbacked) dim", "dynamic": "a mark_dynamic dim",
                "maybe_dynamic": "a maybe_mark_dynamic dim"}
_SYMPTOM = {
    Outcome.DIVERGENCE: "gives wrong values",
    Outcome.NONFINITE: "gives NaN/inf where eager does not",
    Outcome.SHAPE: "returns the wrong shape",
    Outcome.DTYPE: "returns the wrong dtype",
    Outcome.STRIDE: "returns wrong strides",
    Outcome.RECOMPILE: "recompiles where it should reuse the graph",
    Outcome.GRADIENT: "gives wrong gradients",
    Outcome.INPUT_MUTATION: "mutates its input differently from eager",
    Outcome.HANG: "hangs",
    Outcome.OK: "passes",
}


# -- scrubbing -----------------------------------------------------------------

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


# -- environment ----------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def collect_env_text(timeout: float = 120.0) -> str | None:
    """What `python -m torch.utils.collect_env` prints here, or None when it
    cannot run. Captured once per process."""
    try:
        out = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True, text=True,
                             timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    if out.returncode != 0 or "PyTorch version" not in text:
        return None
    return scrub(quiet_env(text))


_CPU_KEEP = ("Architecture:", "CPU(s):", "Model name:")  # of lscpu's block, what a compiler bug may hinge on


def quiet_env(text: str) -> str:
    """collect_env's output without its noise: fields it could not collect
    (N/A, "Could not collect", empty conda), and of the CPU block (lscpu, 40
    lines) only the architecture, CPU count and model."""
    keep, in_cpu = [], False
    for ln in text.splitlines():
        s = ln.strip()
        if s == "CPU:":
            in_cpu = True
            keep.append(ln)
            continue
        if in_cpu and not s:
            in_cpu = False
        if in_cpu and not s.startswith(_CPU_KEEP):
            continue
        if s == "Collecting environment information..." or s.endswith(("Could not collect", ": N/A", ": None")):
            continue
        keep.append(ln)
    return "\n".join(keep).strip()


def _installed_torch() -> str | None:
    try:
        from importlib import metadata

        return metadata.version("torch")
    except Exception:  # noqa: BLE001
        return None


def _env_json_text(env: dict) -> str:
    names = [("torch", "PyTorch version"), ("torch_git", "PyTorch git version"), ("cuda", "CUDA used to build PyTorch"),
             ("hip", "ROCM used to build PyTorch"), ("triton", "Triton version"), ("torch_xla", "torch_xla version"),
             ("gpu", "GPU"), ("python", "Python version"), ("os", "OS"), ("machine", "Machine")]
    lines = [f"{label}: {env[k]}" for k, label in names if env.get(k) is not None]
    lines += [f"{k}: {v}" for k, v in sorted(env.items()) if k not in dict(names) and v is not None]
    return scrub("\n".join(lines))


def environment_text(env: dict) -> tuple[str, str]:
    """(text, note): collect_env's output when the installed torch is the one
    the finding was made with, else the recorded environment."""
    recorded = (env or {}).get("torch")
    installed = _installed_torch()
    same = recorded is None or installed is None or recorded.split("+")[0] == installed.split("+")[0]
    if same:
        text = collect_env_text()
        if text:
            return text, ""
    note = ""
    if not same:
        note = (f"Found with torch {recorded}; the environment below is the one recorded then "
                f"(this machine has torch {installed}).")
    return _env_json_text(env or {}), note


# -- describing the program ------------------------------------------------------

def _op_labels(p: Program) -> list[str]:
    """The ops as their torch API names ("F.pad(reflect)", "torch.mm", "Tensor.narrow"), each once."""
    from fuzz.program.opdb import OPS

    labels = []
    for call in p.ops:
        label = OPS[call.op].label(call.params) if call.op in OPS else call.op
        if label not in labels:
            labels.append(label)
    return labels


def _ops_phrase(p: Program, limit: int = 3) -> str:
    labels = _op_labels(p)
    if not labels:
        return "an identity function"
    if len(labels) > limit:
        return " + ".join(labels[:limit]) + f" (+{len(labels) - limit} more ops)"
    return " + ".join(labels)


def _marked(p: Program) -> list[tuple[str, int, str]]:
    return [(x.name, d, m) for x in p.inputs for d, m in enumerate(x.marks) if m != "static"]


def _strongest_mark(p: Program) -> str | None:
    kinds = {m for _, _, m in _marked(p)}
    for k in ("unbacked", "dynamic", "maybe_dynamic"):
        if k in kinds:
            return k
    return None


def _sizes_text(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _schedule_text(p: Program) -> str:
    if not p.sizes:
        return "(no size symbols)"
    return "; ".join(f"{k} = {', '.join(str(v) for v in vals)}" for k, vals in p.sizes.items())


def _component(p: Program, summary: dict | None) -> str:
    """The earliest stage that reproduces (ablation), else the backend's component."""
    own = _backend_row(p)
    if summary:
        reproducing = set(summary.get("backends_reproducing") or []) | (
            {own.name} if not own.custom and own.name != "openxla" else set())
        for name in ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor"):  # dynamo first, then down
            if name in reproducing:
                return BACKENDS[name].component
    return own.component


def _backend_row(p: Program):
    from fuzz.judge.backends import BackendError, backend

    try:
        return backend(p.settings.backend)
    except BackendError:
        return backend(f"{p.settings.backend}:?")


def _is_dynamic(p: Program, summary: dict | None) -> bool:
    if summary and summary.get("dynamic_shape_bug") is False:
        return False
    return bool(_marked(p)) or p.settings.dynamic is not False


def _first_line(text: str, limit: int = 90) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def _symptom(v: Verdict) -> str:
    exc = v.exc_type.rsplit(".", 1)[-1] if v.exc_type else ""
    if v.outcome is Outcome.COMPILED_ERROR:
        head = _first_line(scrub(v.message), 60).replace('"', "'")
        return (f'raises {exc} "{head}"' if head else f"raises {exc}") if exc else "raises"
    if v.outcome is Outcome.EAGER_ERROR:
        return f"returns where eager raises {exc}" if exc else "returns where eager raises"
    if v.outcome is Outcome.CRASH:
        return f"crashes the process ({exc})" if exc else "crashes the process"
    return _SYMPTOM.get(v.outcome, v.outcome.value.replace("-", " "))


def report_title(p: Program, v: Verdict, summary: dict | None = None) -> str:
    """A short, specific issue title, e.g. "[inductor][dynamic shapes] F.pad(reflect)
    on a mark_dynamic dim gives wrong values at s0=5"."""
    tags = f"[{_component(p, summary)}]"
    dynamic = _is_dynamic(p, summary)
    if dynamic:
        tags += "[dynamic shapes]"
    where = ""
    if dynamic:
        mark = _strongest_mark(p)
        if mark:
            where = f" on {_MARK_PHRASE[mark]}"
        elif p.settings.dynamic is True:
            where = " with dynamic=True"
        else:
            where = " after a size change (automatic dynamic shapes)"
    at = f" at {_sizes_text(v.sizes)}" if v.sizes else ""
    return scrub(f"{tags} {_ops_phrase(p)}{where} {_symptom(v)}{at}")


def _custom_backend(p: Program) -> str | None:
    return p.settings.backend.rpartition(":")[2] if _backend_row(p).custom else None


def _backend_text(p: Program) -> str:
    custom = _custom_backend(p)
    return f"backend={custom}" if custom else f'backend="{p.settings.backend}"'


def _inputs_text(p: Program) -> str:
    parts = []
    for x in p.inputs:
        shape = "(" + ", ".join(str(d) for d in x.shape) + ("," if len(x.shape) == 1 else "") + ")"
        layout = "" if x.layout == "contiguous" else f", {x.layout} layout"
        marks = [f"dim {d} via `{_MARK_API[m]}`" for d, m in enumerate(x.marks) if m != "static"]
        marked = f", marking {' and '.join(marks)}" if marks else ""
        parts.append(f"`{x.name}` ({x.dtype}, shape {shape}{layout}{marked})")
    return ", ".join(parts)


def _stage_text(v: Verdict) -> str:
    if v.stage is Stage.COMPILE:
        return " while compiling"
    if v.stage is Stage.EXECUTE:
        return " while running the compiled code"
    return ""


def _ablation_sentence(summary: dict | None) -> str:
    if not summary:
        return ""
    s = []
    backends = summary.get("backends_reproducing") or []
    if summary.get("harness_bug"):
        s.append('It also reproduces with backend="eager".')
    elif backends:
        s.append("It also reproduces with " + ", ".join(f'backend="{b}"' for b in backends) + ".")
    if summary.get("dynamic_shape_bug") is True:
        s.append("It does not reproduce with static shapes (dynamic=False, no dims marked).")
    elif summary.get("dynamic_shape_bug") is False:
        s.append("It reproduces with static shapes too (dynamic=False, no dims marked).")
    flags = summary.get("minimal_flags")
    if flags:
        s.append("Setting " + ", ".join(f"`torch._inductor.config.{k} = {v!r}`" for k, v in flags.items())
                 + " makes it pass.")
    return " ".join(s)


def describe(p: Program, v: Verdict, summary: dict | None = None, short: bool = False) -> str:
    """The description paragraph; `short`: the repro inlined is the short form (fuzz/program/short_repro.py)."""
    s = p.settings
    where = f"on {s.device.upper()}"
    compile_kw = [_backend_text(p), f"dynamic={s.dynamic!r}"]
    if s.mode:
        compile_kw.append(f'mode="{s.mode}"')
    if s.options:
        compile_kw.append(f"options={s.options!r}")
    at = f" at {_sizes_text(v.sizes)}" if v.sizes else ""
    call = f" (call {v.call + 1} of {p.calls})" if v.call is not None else ""
    if v.outcome is Outcome.COMPILED_ERROR:
        what = f"raises `{v.exc_type}`{_stage_text(v)}{at}{call}, while eager runs fine"
    elif v.outcome is Outcome.EAGER_ERROR:
        what = f"returns a result{at}{call} where eager raises `{v.exc_type}`"
    elif v.outcome is Outcome.CRASH:
        what = f"kills the process{at}{call} ({v.exc_type or 'crash'})"
    elif v.outcome is Outcome.HANG:
        what = f"does not return{at}{call}"
    else:
        thing = re.sub(r"\s*\(.*\)$", "", v.where or "") or "the outputs"
        what = f"{_SYMPTOM.get(v.outcome, v.outcome.value)} in {thing}{at}{call}"
        if v.outcome in (Outcome.DIVERGENCE, Outcome.NONFINITE):
            what += ", while eager agrees with a float64 reference"
    custom = _custom_backend(p)
    custom = f" (`{custom}` is a custom torch.compile backend, imported by the repro)" if custom else ""
    text = (f"A function compiled with `torch.compile({', '.join(compile_kw)})`{custom} {where} applies "
            f"{_ops_phrase(p, limit=8)} to {_inputs_text(p)}. One compiled function is called once per size of the "
            f"schedule {_schedule_text(p)}; it {what}. ")
    text = (text + _ablation_sentence(summary)).rstrip()
    imports = f"It imports only torch{' and the backend' if custom else ''} and exits 1 while the bug stands, " \
              "0 once it is fixed."
    if short:
        text += ("\n\nThe repro below calls the function eagerly and compiled on the same seeded inputs, at the "
                 "calls of the schedule up to the failing one, and checks what goes wrong "
                 "(`torch.testing.assert_close` at the dtype's tolerance for values). " + imports)
    else:
        text += ("\n\nThe repro (too long to inline: attach it; the note below says how to make it) compares "
                 "compiled and eager at default tolerances with a float64 eager "
                 "reference (the rule of `torch._dynamo.utils.same` with `fp64_ref`), with "
                 "`torch._inductor.config.fallback_random = True`, TF32 off and the same seeded inputs for every "
                 "run. " + imports)
    return scrub(text)


# -- observed vs expected -----------------------------------------------------------

def _fmt(x) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def _output_dtype(p: Program, where: str) -> str | None:
    m = re.match(r"output (\d+)", where or "")
    try:
        from fuzz.program.typecheck import typecheck

        env = typecheck(p)
        if m:
            return env[p.outputs[int(m.group(1))]].dtype
        m = re.match(r"input (\w+)", where or "")
        if m:
            return env[m.group(1)].dtype
    except Exception:  # noqa: BLE001
        pass
    return None


def observed_expected(p: Program, v: Verdict) -> str:
    n = v.numbers or {}
    at = f" at {_sizes_text(v.sizes)}" if v.sizes else ""
    lines = []
    if v.outcome in (Outcome.DIVERGENCE, Outcome.INPUT_MUTATION) and "max_abs" in n:
        thing = v.where or "output"
        lines += [f"Values of {thing}{at}:", "",
                  "| | compiled | eager |", "|---|---|---|"]
        if "compiled_vs_fp64" in n:
            lines.append(f"| RMS error vs float64 reference | {_fmt(n['compiled_vs_fp64'])} | "
                         f"{_fmt(n.get('eager_vs_fp64', '-'))} |")
        lines.append(f"| max abs difference to eager | {_fmt(n['max_abs'])} | 0 |")
        if "max_rel" in n:
            lines.append(f"| max rel difference to eager | {_fmt(n['max_rel'])} | 0 |")
        dt = _output_dtype(p, v.where)
        tol = {"float64": 1e-7, "float32": 1e-4, "float16": 1e-3, "bfloat16": 1e-2}.get(dt or "")
        if tol is not None:
            mult = 3.0 if dt in ("float16", "bfloat16") else 2.0
            lines += ["", f"Expected: allclose to eager (rtol=atol={tol:g} for {dt}), or an RMS error against the "
                          f"float64 reference of at most {mult:g} x eager's + {tol / 10:g}."]
        else:
            lines += ["", "Expected: the same values as eager."]
    elif v.outcome in (Outcome.DIVERGENCE, Outcome.INPUT_MUTATION) and "mismatched" in n:
        lines += [f"Observed: {n['mismatched']} of {n.get('numel', '?')} elements of {v.where or 'the output'} "
                  f"differ from eager{at}.", "", "Expected: exactly eager's values (integer/bool dtype)."]
    elif v.outcome is Outcome.NONFINITE:
        lines += [f"Observed: NaN/inf at {n.get('positions', '?')} of {n.get('numel', '?')} positions of "
                  f"{v.where or 'the output'}{at} where eager (and the float64 reference) differ.", "",
                  "Expected: NaN/inf exactly where eager has them."]
    elif v.outcome in (Outcome.SHAPE, Outcome.DTYPE, Outcome.STRIDE) or (v.message and not v.exc_type):
        lines += [f"Observed: {v.where or 'output'}{at}: {scrub(v.message)}", "",
                  "Expected: the same as eager."]
    elif v.outcome is Outcome.COMPILED_ERROR:
        lines += [f"Observed: the compiled function raises `{v.exc_type}`{_stage_text(v)}{at}:", "",
                  f"> {_first_line(scrub(v.message), 300)}", "",
                  "Expected: the same result as eager, which runs without error."]
    elif v.outcome is Outcome.EAGER_ERROR:
        lines += [f"Observed: the compiled function returns{at}.", "",
                  f"Expected: `{v.exc_type}` as in eager: {_first_line(scrub(v.message), 300)}"]
    elif v.outcome is Outcome.CRASH:
        lines += [f"Observed: the process dies{at} ({v.exc_type or 'crash'}).", "",
                  "Expected: the same result as eager."]
    elif v.outcome is Outcome.HANG:
        lines += [f"Observed: the compiled call does not return{at}.", "", "Expected: the same result as eager."]
    else:
        lines += [f"Observed: {scrub(v.summary())}", "", "Expected: the same result as eager."]
    return "\n".join(lines)


_TORCH_PATH = re.compile(r"(?:^|/)(torch_xla|torch|triton)/")


def error_log(v: Verdict) -> str:
    """The error as a traceback tail: frames inside torch/triton/torch_xla and
    the message's last lines; "" for value outcomes."""
    if not (v.exc_type or v.outcome in (Outcome.CRASH, Outcome.HANG)):
        return ""
    lines = []
    frames = []
    for f in v.frames or []:
        m = re.match(r"^(.*):(\d+):([^:]*)$", str(f))
        if m and _TORCH_PATH.search(m.group(1).replace("\\", "/")):
            path = m.group(1).replace("\\", "/")
            path = path[_TORCH_PATH.search(path).start(1):] if not path.startswith(("torch", "triton")) else path
            frames.append(f'  File "{path}", line {m.group(2)}, in {m.group(3)}')
    if frames:
        lines.append("Traceback (frames inside torch, most recent call last):")
        lines += frames
    msg = scrub(v.message or "").rstrip().splitlines()
    if len(msg) > _ERROR_LOG_LINES:
        msg = ["[...]"] + msg[-_ERROR_LOG_LINES:]
    if v.exc_type and msg:
        msg[0] = f"{v.exc_type}: {msg[0]}"
    elif v.exc_type:
        msg = [v.exc_type]
    lines += msg
    return "\n".join(lines)


# -- ablation -------------------------------------------------------------------

def _variant_text(row: dict) -> str:
    c = row.get("changes") or {}
    axis = row.get("axis")
    if axis == "baseline":
        return "as in the repro"
    if axis == "backend":
        return f'backend="{c.get("backend")}"'
    if axis == "shapes":
        if c == {"marks": "static"}:
            return "no dims marked dynamic"
        if c == {"dynamic": False}:
            return "dynamic=False"
        return "dynamic=False, no dims marked dynamic"
    if axis == "device":
        return f'device="{c.get("device")}"'
    if axis == "mode":
        return "mode=None"
    if axis in ("inductor-config", "inductor-config-set") and c.get("options"):
        return "<br>".join(f"`torch._inductor.config.{k} = {v!r}`" for k, v in c["options"].items())
    return scrub(str(row.get("variant", "")))


def _result_text(row: dict) -> str:
    status = row.get("status")
    if status == "reproduces":
        return "**reproduces**"
    if status == "passes":
        return "passes"
    if status == "other":
        outcome = row.get("outcome", "")
        detail = scrub(_first_line(row.get("summary", ""), 100)).replace("|", "\\|")
        return f"fails differently ({outcome}): {detail}" if detail else f"fails differently ({outcome})"
    if status == "skipped":
        return "skipped: " + scrub(row.get("summary", "")).replace("|", "\\|")
    return "could not run: " + scrub(_first_line(row.get("summary", ""), 100)).replace("|", "\\|")


def ablation_table(doc: dict) -> str:
    lines = ["| torch.compile variant | result |", "|---|---|"]
    for row in doc.get("rows", []):
        if not isinstance(row, dict):
            continue
        lines.append(f"| {_variant_text(row)} | {_result_text(row)} |")
    return "\n".join(lines)


# -- the report -----------------------------------------------------------------------

def _repro_text(entry) -> str:
    """The entry's repro.py with its docstring's first line (the tool's own
    label) replaced by a neutral one; regenerated when the entry's is a stub
    or not a short form (a full harness is never inlined: a torch.compile entry
    without a short form shows the note on how to generate it)."""
    path = Path(entry.path) / "repro.py"
    try:
        src = path.read_text(encoding="utf-8")
    except OSError:
        src = ""
    title = "Repro: torch.compile vs eager over a size schedule"
    short = "lines" in ((entry.meta or {}).get("short_repro") or {})
    if (not src or not short or "No repro: code generation failed" in src) and entry.program is not None:
        try:
            from fuzz.findings.scripts import settled_scripts

            src = settled_scripts(entry.program, entry.verdict, entry.signature, entry.meta or {})[0]["repro.py"]
        except Exception:  # noqa: BLE001 - the stored text then
            pass
    if src.startswith('"""'):
        first, _, rest = src.partition("\n")
        src = f'"""{title}\n{rest}'
    return src


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def compiled_parts(entry) -> dict:
    """The pieces of a torch.compile entry's report, laid out by render_compiled
    (PyTorch's template) or report_xla.render_openxla (PyTorch/XLA's)."""
    from fuzz.findings.triage import load_ablation

    p, v = entry.program, entry.verdict
    doc = load_ablation(entry.path)
    summary = doc.get("summary") if doc else None
    env_text, env_note = environment_text(entry.env)
    short = "lines" in ((entry.meta or {}).get("short_repro") or {})
    return dict(title=report_title(p, v, summary), description=describe(p, v, summary, short), repro=_repro_text(entry),
                observed=observed_expected(p, v), log=error_log(v), doc=doc, env_text=env_text, env_note=env_note,
                env=entry.env)


def render_compiled(entry) -> str:
    """The PyTorch bug-report layout for a torch.compile entry."""
    k = compiled_parts(entry)
    title, description, repro, observed, log, doc = (k[n] for n in ("title", "description", "repro", "observed",
                                                                    "log", "doc"))
    env_text, env_note = k["env_text"], k["env_note"]
    parts = [f"# {title}", "", "### 🐛 Describe the bug", "", description, "", "Minimal repro:", "",
             _fence(repro, "python"), "", "#### Observed vs expected", "", observed, ""]
    if doc:
        parts += ["#### Ablation", "", ablation_table(doc), ""]
    parts += ["### Error logs", ""]
    parts += [_fence(log), ""] if log else ["No error is raised: the compiled function returns the wrong result "
                                            "described above.", ""]
    trace = trace_text(entry)
    if trace:
        parts += ["#### Trace", "", trace, ""]
    affected = affected_text(entry, scrub)
    if affected:
        parts += ["#### Affected releases", "", affected, ""]
    parts += ["#### Searching for duplicates", "", duplicate_search(entry.verdict), ""]
    parts += ["### Versions", ""]
    if env_note:
        parts += [env_note, ""]
    parts += [_fence(env_text), ""]
    return "\n".join(parts) + program_stamp(entry.program)
