"""Issue-ready markdown for a corpus entry.

`render_report(entry)` follows PyTorch's torch.compile bug-report template
(🐛 Describe the bug / Error logs / Versions) and, for torch_xla findings
(backend "openxla"), PyTorch/XLA's (🐛 Bug / To Reproduce / Expected behavior
/ Environment / Additional context). It holds a title that names the trigger
and the symptom and claims dynamic shapes only where a dim is symbolic, one
paragraph of description, the entry's standalone repro.py inline, expected
and actual in a sentence each for the outcome class and why it matters
(report_outcome.py), the ablation collapsed to the rows that matter
(report_ablation.py), the torch releases it affects (`shapefuzz versions`), a
suggested duplicate search (the masked message and the key frame), and the
environment as `python -m torch.utils.collect_env` prints it without its noise
(run once per process; env.json when it cannot run or when the installed
torch is not the one of the finding). Its last line is a comment naming the
program it describes: `replay` flags a report whose entry's program has
changed since. Every field from data reaches the Markdown through
fuzz/findings/markdown.py.

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

from fuzz.findings import markdown as md
from fuzz.findings.report_ablation import ablation_table  # noqa: F401 - report_xla's too
from fuzz.findings.report_outcome import WHY, expected_actual
from fuzz.findings.scrubbing import scrub
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

def _op_labels(p: Program, neutral: bool = True) -> list[str]:
    """The ops as their torch API names ("F.pad(reflect)", "torch.mm", "Tensor.narrow"), each once
    (`neutral` False: without the shrinker's neutral op)."""
    from fuzz.program.opdb import OPS

    labels = []
    for call in p.ops:
        if not neutral and call.op in _NEUTRAL_OPS:
            continue
        label = OPS[call.op].label(call.params) if call.op in OPS else call.op
        if label not in labels:
            labels.append(label)
    return labels


def _ops_phrase(p: Program, limit: int = 3, neutral: bool = True) -> str:
    labels = _op_labels(p, neutral)
    if not labels:
        return "a pointwise op" if p.ops else "an identity function"
    if len(labels) > limit:
        return " + ".join(labels[:limit]) + f" (+{len(labels) - limit} more ops)"
    return " + ".join(labels)


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


def _size_at(p: Program, d, call: int | None):
    """A dim's size at `call` (its literal, or its symbol's value), or None when unknown."""
    if not isinstance(d, str):
        return d
    vals = p.sizes.get(d) or []
    i = call if call is not None else len(vals) - 1
    return vals[i] if 0 <= i < len(vals) else None


def symbolic_reason(p: Program, v: Verdict, summary: dict | None = None) -> str | None:
    """Why a dim is symbolic in the program at its failing call, as the title's phrase ("on a mark_dynamic dim",
    "with dynamic=True", "after a size change (automatic dynamic shapes)"), or None: the program ran with static
    shapes and a title must not claim dynamic ones. A triage that tried static shapes decides."""
    if summary and summary.get("dynamic_shape_bug") is False:
        return None
    call = v.call if isinstance(v.call, int) else None
    # a marked dim is symbolic unless Dynamo specialises it: mark_dynamic/maybe_mark_dynamic of a size 0 or 1
    kinds = {m for x in p.inputs for d, m in zip(x.shape, x.marks)
             if m == "unbacked" or (m in ("dynamic", "maybe_dynamic") and (_size_at(p, d, call) or 0) >= 2)}
    mark = next((k for k in ("unbacked", "dynamic", "maybe_dynamic") if k in kinds), None)
    if mark:
        return f"on {_MARK_PHRASE[mark]}"
    upto = (call if call is not None else p.calls - 1) + 1
    changed = any(len(set(vals[:upto])) > 1 for vals in p.sizes.values())
    if p.settings.dynamic is True and upto > 1:
        return "with dynamic=True"
    if p.settings.dynamic is None and changed and v.recompiles >= 2:  # the size change recompiled dynamic
        return "after a size change (automatic dynamic shapes)"
    if summary and summary.get("dynamic_shape_bug") is True:  # static shapes pass: dynamic=True or marks matter
        return "with dynamic=True" if p.settings.dynamic is True else "with dims marked dynamic"
    return None


_NEUTRAL_OPS = ("nan_to_num",)  # the shrinker's neutral op: it stands in for "some op", never the trigger
_LAYOUT_PHRASE = {"offset": "a storage-offset input", "transposed": "a transposed input",
                  "permuted": "a permuted input", "channels_last": "a channels_last input",
                  "expanded": "an expanded (stride-0) input", "strided": "a strided-slice input",
                  "overlapping": "a self-overlapping (as_strided) input"}


_NARROW_DTYPES = ("uint8", "int8", "int16", "bool", "float16", "bfloat16")  # named in a title where kept
_ITEM_AS_LENGTH = ("item_narrow", "item_arange", "item_pad")  # ops whose .item() value sizes a tensor


def trigger(p: Program) -> str:
    """What sets the bug off beyond its ops, as a phrase ("an aliased input mutated in place", "a length read with
    .tolist()", "an input with a storage offset"), or "": the features the shrinker could not take away."""
    from fuzz.program.opdb import OPS

    specs = [(c, OPS[c.op]) for c in p.ops if c.op in OPS]
    parts = []
    if any(x.alias is not None and x.alias.get("calls") for x in p.inputs):  # a view at some calls, a copy at others
        parts.append("an input whose aliasing changes between calls" + (
            ", mutated in place," if any(s.mutates for _, s in specs) else ""))
    elif any(x.alias is not None for x in p.inputs) and any(s.mutates for _, s in specs):
        parts.append("an aliased input mutated in place")
    reads = [(c.op, c.params.get("via")) for c, s in specs if c.op.startswith("item_")]
    if reads:
        op, via = reads[0]
        noun = "length" if op in _ITEM_AS_LENGTH else "value"  # item_clamp's bound, item_full's fill: no size
        parts.append(f"a {noun} read with .{via if via in ('item', 'tolist') else 'item'}()")
    elif any(s.family == "data" for _, s in specs):
        parts.append("a data-dependent (unbacked) size")
    layouts = [x.layout for x in p.inputs if x.alias is None and x.layout in _LAYOUT_PHRASE]
    if layouts:
        parts.append(_LAYOUT_PHRASE[layouts[0]])
    narrow = [x.dtype for x in p.inputs if x.alias is None and x.dtype in _NARROW_DTYPES]
    if narrow and len(parts) < 2:  # the shrinker moves dtypes towards float32: one that stayed matters
        parts.append(f"a{'n' if narrow[0].startswith('int') else ''} {narrow[0]} input")  # a uint8, an int8
    return " and ".join(parts[:2])


def _first_line(text: str, limit: int = 90) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


# subprocess.CalledProcessError's text: the compiler Inductor's C++ backend ran, and its exit status
_FAILED_COMMAND = re.compile(r"Command '\['([^']+)'.*' returned non-zero exit status (-?\d+)", re.S)


def _symptom(v: Verdict) -> str:
    exc = v.exc_type.rsplit(".", 1)[-1] if v.exc_type else ""
    if v.outcome is Outcome.COMPILED_ERROR:
        if m := _FAILED_COMMAND.match(v.message or ""):  # a command line of temp paths says nothing
            return f"fails to build: {m.group(1).rsplit('/', 1)[-1]} exits with status {m.group(2)}"
        message = v.message or ""
        if message.startswith("error: "):  # a C++ compiler's diagnostic (verdict._compiler_error)
            message = message[len("error: "):]
        head = _first_line(scrub(message), 60).replace('"', "'")
        return (f'raises {exc} "{head}"' if head else f"raises {exc}") if exc else "raises"
    if v.outcome is Outcome.EAGER_ERROR:
        return f"returns where eager raises {exc}" if exc else "returns where eager raises"
    if v.outcome is Outcome.CRASH:
        return f"crashes the process ({exc})" if exc else "crashes the process"
    return _SYMPTOM.get(v.outcome, v.outcome.value.replace("-", " "))


def _symbolic_sizes(p: Program, dynamic: str | None) -> set:
    """The size symbols of dims that are symbolic (`dynamic`: symbolic_reason's phrase): a title names their
    values; a symbol of a static dim means nothing to a reader."""
    if not dynamic:
        return set()
    if not dynamic.startswith("on "):  # dynamic=True or automatic dynamic: any dim may be
        return set(p.sizes)
    return {d for x in p.inputs for d, m in zip(x.shape, x.marks) if isinstance(d, str) and m != "static"}


def shown_sizes(p: Program, v: Verdict, summary: dict | None = None) -> dict:
    """The failing call's sizes worth naming: those of symbolic dims (none for static shapes)."""
    keep = _symbolic_sizes(p, symbolic_reason(p, v, summary))
    return {k: n for k, n in v.sizes.items() if k in keep} if isinstance(v.sizes, dict) else {}


def report_title(p: Program, v: Verdict, summary: dict | None = None) -> str:
    """A short, specific issue title (plain text: the report escapes it), e.g. "[inductor][dynamic shapes]
    F.pad(reflect) on a mark_dynamic dim gives wrong values at s0=5". It names the trigger and the symptom, and
    claims dynamic shapes (the tag, the phrase, the sizes) only where a dim is symbolic (`symbolic_reason`)."""
    tags = f"[{_component(p, summary)}]"
    dynamic = symbolic_reason(p, v, summary)
    if dynamic:
        tags += "[dynamic shapes]"
    ops = _ops_phrase(p, neutral=False)
    cause = trigger(p)
    if dynamic and dynamic.startswith("on ") and cause:
        where = f" {dynamic}, with {cause},"
    elif cause:
        where = f" on {cause}" + (f" {dynamic}" if dynamic else "")
    else:
        where = f" {dynamic}" if dynamic else ""
    if p.settings.backward:  # the shrinker tries backward -> False: a shrunk program keeps it only if needed
        where += ("," if where and not where.endswith(",") else "") + " with inputs that require grad,"
    shown = shown_sizes(p, v, summary)
    at = f" at {_sizes_text(shown)}" if shown else ""
    needed = needed_options(p, summary)
    under = f" ({', '.join(f'{k}={v!r}' for k, v in needed.items())})" if needed else ""
    return scrub(f"{tags} {ops}{where} {_symptom(v)}{at}{under}")


def needed_options(p: Program, summary: dict | None) -> dict:
    """The program's compile options that the bug needs: those whose flip alone made it pass in triage
    (ablation's flags_turning_off), with the program's values. A title names them: a cudagraphs-only bug
    is filed under cudagraphs."""
    options = p.settings.options or {}
    flips = (summary or {}).get("flags_turning_off") or []
    keys = [k for flip in flips if isinstance(flip, dict) and len(flip) == 1 for k in flip]
    return {k: options[k] for k in keys if k in options}


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
    """(expected, actual, why it matters): a sentence each, in Markdown (fuzz/findings/report_outcome.py)."""
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
    return md.block(text, lang)


def compiled_parts(entry) -> dict:
    """The pieces of a torch.compile entry's report, laid out by render_compiled
    (PyTorch's template) or report_xla.render_openxla (PyTorch/XLA's). Every
    piece is Markdown but title (plain text), repro, log and env_text (code)."""
    from fuzz.findings.scripts import repro_device
    from fuzz.findings.triage import load_ablation

    p, v = entry.program, entry.verdict
    doc = load_ablation(entry.path)
    summary = doc.get("summary") if doc and isinstance(doc.get("summary"), dict) else None
    env_text, env_note = environment_text(entry.env)
    short = "lines" in ((entry.meta or {}).get("short_repro") or {})
    repro = _repro_text(entry)
    device = repro_device(p, doc) if short and "cuda" not in repro else None
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
