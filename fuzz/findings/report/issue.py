"""Issue-ready markdown for a corpus entry.

`render_report(entry)` follows PyTorch's torch.compile bug-report template
(🐛 Describe the bug / Error logs / Versions) and, for torch_xla findings
(backend "openxla"), PyTorch/XLA's (🐛 Bug / To Reproduce / Expected behavior
/ Environment / Additional context). It holds a title that names the trigger
and the symptom and claims dynamic shapes only where a dim is symbolic, one
paragraph of description, the entry's standalone repro.py inline, expected
and actual in a sentence each for the outcome class and why it matters
(report/outcome.py), the ablation collapsed to the rows that matter
(report/ablation.py), the torch releases it affects (`shapefuzz versions`), a
suggested duplicate search (the masked message and the key frame), and the
environment as `python -m torch.utils.collect_env` prints it without its noise
(run once per process; env.json when it cannot run or when the installed
torch is not the one of the finding). Its last line is a comment naming the
program it describes: `replay` flags a report whose entry's program has
changed since. Every field from data reaches the Markdown through
fuzz/findings/report/markdown.py.

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

from fuzz.findings.report import markdown as md
from fuzz.findings.report.ablation import ablation_table  # noqa: F401 - report_xla's too
from fuzz.findings.report.outcome import WHY, expected_actual
from fuzz.findings.report.scrubbing import scrub
from fuzz.findings.report.parts import affected_text, duplicate_search
from fuzz.findings.store.scripts import program_stamp
from fuzz.findings.report.title import (_SYMPTOM, _backend_row, _op_labels, _size_at, _sizes_text,  # noqa: F401
                                        entry_summary, report_title, shown_sizes, symbolic_reason)
from fuzz.findings.report.trace import trace_text
from fuzz.program.ir import Program
from fuzz.judge.verdict import Outcome, Stage, Verdict

_ERROR_LOG_LINES = 60
_MARK_API = {"dynamic": "torch._dynamo.mark_dynamic", "maybe_dynamic": "torch._dynamo.maybe_mark_dynamic",
             "unbacked": "torch._dynamo.decorators.mark_unbacked"}


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


# -- describing the program (its title: fuzz/findings/report/title.py) ---------------

def _custom_backend(p: Program) -> str | None:
    return p.settings.backend.rpartition(":")[2] if _backend_row(p).custom else None


def _backend_text(p: Program) -> str:
    custom = _custom_backend(p)
    return f"backend={custom}" if custom else f'backend="{p.settings.backend}"'


def _inputs_text(p: Program, v: Verdict, shown: dict) -> str:
    """The inputs, each with its shape at the failing call (a symbol named only where it is symbolic)."""
    parts = []
    call = v.call if isinstance(v.call, int) else None
    for x in p.inputs:
        dims = [d if d in shown else _size_at(p, d, call) for d in x.shape]
        shape = "(" + ", ".join(str(d) for d in dims) + ("," if len(x.shape) == 1 else "") + ")"
        layout = "" if x.layout == "contiguous" else f", {x.layout} layout"
        alias = f", a view of {md.code(x.alias.get('of'))}" if x.alias is not None else ""
        marks = [f"dim {d} via {md.code(_MARK_API[m])}" for d, m in enumerate(x.marks) if m != "static"]
        marked = f", marking {' and '.join(marks)}" if marks else ""
        parts.append(f"{md.code(x.name)} ({x.dtype}, shape {md.code(shape)}{layout}{alias}{marked})")
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
    backends = [b for b in summary.get("backends_reproducing") or [] if isinstance(b, str)]
    if summary.get("harness_bug"):
        s.append('It also reproduces with backend="eager".')
    elif backends:
        s.append("It also reproduces with " + ", ".join(md.code(f'backend="{b}"') for b in backends) + ".")
    if summary.get("dynamic_shape_bug") is True:
        s.append("It does not reproduce with static shapes (dynamic=False, no dims marked).")
    elif summary.get("dynamic_shape_bug") is False:
        s.append("It reproduces with static shapes too (dynamic=False, no dims marked).")
    flags = summary.get("minimal_flags")
    if isinstance(flags, dict) and flags:
        s.append("Setting " + ", ".join(md.code(f"torch._inductor.config.{k} = {v!r}") for k, v in flags.items())
                 + " makes it pass.")
    return " ".join(s)


def describe(p: Program, v: Verdict, summary: dict | None = None, short: bool = False,
             repro_device: str | None = None) -> str:
    """The description paragraph; `short`: the repro inlined is the short form (fuzz/program/short_repro.py);
    `repro_device`: the device the repro runs on where it is not the finding's (a CUDA finding shown on CPU)."""
    s = p.settings
    compile_kw = [_backend_text(p)] + ([f"dynamic={s.dynamic!r}"] if s.dynamic is not None else [])
    if s.mode:
        compile_kw.append(f'mode="{s.mode}"')
    if s.options:
        compile_kw.append(f"options={s.options!r}")
    shown = shown_sizes(p, v, summary)
    at = f" at {md.text(_sizes_text(shown), 200)}" if shown else ""
    upto = (v.call if isinstance(v.call, int) else p.calls - 1) + 1
    call = f" (call {upto} of the {upto} calls in the repro)" if upto > 1 else ""
    if v.outcome is Outcome.COMPILED_ERROR:
        what = f"raises {md.code(scrub(v.exc_type))}{_stage_text(v)}{at}{call}, while eager runs fine"
    elif v.outcome is Outcome.EAGER_ERROR:
        what = f"returns a result{at}{call} where eager raises {md.code(scrub(v.exc_type))}"
    elif v.outcome is Outcome.CRASH:
        what = f"kills the process{at}{call} ({md.text(scrub(v.exc_type or 'crash'), 100)})"
    elif v.outcome is Outcome.HANG:
        what = f"does not return{at}{call}"
    elif v.outcome is Outcome.RECOMPILE:
        what = f"compiles a new graph{at}{call} where it should reuse one"
    else:
        thing = re.sub(r"\s*\(.*\)$", "", str(v.where or "")) or "the outputs"
        what = f"{_SYMPTOM.get(v.outcome, v.outcome.value)} in {md.text(scrub(thing), 80)}{at}{call}"
    custom = _custom_backend(p)
    custom = f" ({md.code(custom)} is a custom torch.compile backend, imported by the repro)" if custom else ""
    where = f"on {s.device.upper()}"
    if repro_device and repro_device != s.device:
        where += f" (and on {repro_device.upper()}, where the repro below runs)"
    compile_call = md.code(f"torch.compile({', '.join(compile_kw)})")
    text = (f"A function compiled with {compile_call}{custom} {where} "
            f"applies {' + '.join(md.code(op) for op in _op_labels(p)) or 'nothing'} to {_inputs_text(p, v, shown)}; "
            f"it {what}. ")
    text = (text + _ablation_sentence(summary)).rstrip()
    imports = f"imports only torch{' and the backend' if custom else ''} and exits 1 while the bug stands, 0 once " \
              "it is fixed."
    if short:
        text += "\n\nThe repro below " + imports
    else:
        text += ("\n\nThe repro (too long to inline: attach it; the note below says how to make it) compares "
                 "compiled and eager at default tolerances with a float64 eager "
                 "reference (the rule of `torch._dynamo.utils.same` with `fp64_ref`), with "
                 "`torch._inductor.config.fallback_random = True`, TF32 off and the same seeded inputs for every "
                 "run; it " + imports)
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


def observed_expected(p: Program, v: Verdict, summary: dict | None = None) -> tuple[str, str, str]:
    """(expected, actual, why it matters): a sentence each, in Markdown (fuzz/findings/report/outcome.py)."""
    where = v.where if isinstance(v.where, str) else ""
    expected, actual = expected_actual(p, v, sizes=shown_sizes(p, v, summary), dtype=_output_dtype(p, where),
                                       scrub=scrub)
    return expected, actual, WHY.get(v.outcome, "")


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


# -- the report -----------------------------------------------------------------------

def _repro_text(entry) -> str:
    """The entry's repro.py with its docstring's first line (the tool's own
    label) replaced by a neutral one; regenerated when the entry's is a stub
    or not a short form (a full harness is never inlined: a torch.compile entry
    without a short form shows the note on how to generate it)."""
    from fuzz.findings.store.corpus_files import CorpusFileError, read_stored_text

    try:
        src = read_stored_text(Path(entry.path) / "repro.py")
    except CorpusFileError:
        src = ""
    title = "Repro: torch.compile vs eager over a size schedule"
    short = "lines" in ((entry.meta or {}).get("short_repro") or {})
    if (not src or not short or "No repro: code generation failed" in src) and entry.program is not None:
        try:
            from fuzz.findings.store.scripts import settled_scripts

            src = settled_scripts(entry.program, entry.verdict, entry.signature, entry.meta or {})[0]["repro.py"]
        except Exception:  # noqa: BLE001 - the stored text then
            pass
    if src.startswith('"""'):
        first, _, rest = src.partition("\n")
        src = f'"""{title}\n{rest}'
    return src


def _fence(text: str, lang: str = "") -> str:
    return md.block(text, lang)


def compiled_parts(entry) -> dict:
    """The pieces of a torch.compile entry's report, laid out by render_compiled
    (PyTorch's template) or report/xla.py render_openxla (PyTorch/XLA's). Every
    piece is Markdown but title (plain text), repro, log and env_text (code)."""
    from fuzz.findings.store.scripts import entry_repro_device
    from fuzz.findings.triage import load_ablation

    p, v = entry.program, entry.verdict
    doc = load_ablation(entry.path)
    summary = entry_summary(entry)
    env_text, env_note = environment_text(entry.env)
    short = "lines" in ((entry.meta or {}).get("short_repro") or {})
    repro = _repro_text(entry)
    # where the repro runs: the CPU twin's record first, as the stored repro.py was written (repro_files.py)
    device = entry_repro_device(entry.path, p) if short and "cuda" not in repro else None
    expected, actual, why = observed_expected(p, v, summary)
    return dict(title=report_title(p, v, summary), description=describe(p, v, summary, short, device), repro=repro,
                observed=f"Actual: {actual}\n\nExpected: {expected}", expected=expected, actual=actual, why=why,
                log=error_log(v), doc=doc, env_text=env_text, env_note=md.text(env_note), env=entry.env)


def render_compiled(entry) -> str:
    """The PyTorch bug-report layout for a torch.compile entry."""
    k = compiled_parts(entry)
    parts = [f"# {md.text(k['title'], 400)}", "", "### 🐛 Describe the bug", "", k["description"], "",
             "Minimal repro:", "", _fence(k["repro"], "python"), "",
             "#### Expected and actual", "", f"Expected: {k['expected']}", "", f"Actual: {k['actual']}", ""]
    if k["why"]:
        parts += [f"Why it matters: {k['why']}", ""]
    if k["doc"]:
        parts += ["#### Ablation", "", ablation_table(k["doc"]), ""]
    parts += ["### Error logs", ""]
    if k["log"]:
        parts += [_fence(k["log"]), ""]
    elif entry.verdict.outcome is Outcome.RECOMPILE:
        parts += ["No error is raised without `torch._dynamo.config.error_on_recompile = True`; "
                  "`TORCH_LOGS=recompiles` shows the guard that failed.", ""]
    else:
        parts += ["No error is raised: the compiled function returns the wrong result described above.", ""]
    trace = trace_text(entry)
    if trace:
        parts += ["#### Trace", "", trace, ""]
    affected = affected_text(entry, scrub)
    if affected:
        parts += ["#### Affected releases", "", affected, ""]
    parts += ["#### Searching for duplicates", "", duplicate_search(entry.verdict), ""]
    parts += ["### Versions", ""]
    if k["env_note"]:
        parts += [k["env_note"], ""]
    parts += [_fence(k["env_text"]), ""]
    return "\n".join(parts) + program_stamp(entry.program)
