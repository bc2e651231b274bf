"""What a report says about a torch.compile program in its title: the ops as the torch API a user writes, the
trigger beyond them (an aliased input written in place, a length read with .item(), a layout), the symptom, the
options the bug needs, and a claim of dynamic shapes only where a dim is symbolic and the bug is known to need it
(symbolic_reason). fuzz/findings/report/issue.py lays the rest of the report out around it."""

from __future__ import annotations

import re

from fuzz.findings.report.scrubbing import scrub
from fuzz.judge.backends import BACKENDS
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.program.ir import Program

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
    Outcome.ALIASING: "returns an output that shares storage where eager's does not (or the other way round)",
    Outcome.HANG: "hangs",
    Outcome.OK: "passes",
}


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
    shapes and a title must not claim dynamic ones. A triage that tried static shapes decides; without one,
    marks and dynamic=True that the shrinker could not try to take away (`marks_unproven`: the entry's signature
    pins them, or its shrink ran out of time) say nothing."""
    if summary and summary.get("dynamic_shape_bug") is False:
        return None
    if summary and summary.get("marks_unproven") and summary.get("dynamic_shape_bug") is None:
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


def _cropped_to_empty(p: Program, call: int | None) -> bool:
    """Whether a pad's negative widths crop a non-empty dim of its input to size 0 at `call` (the last call when
    None): the empty result, not the pad, is then what a reader must see."""
    from fuzz.program.typecheck import typecheck

    try:
        env = typecheck(p)
    except Exception:  # noqa: BLE001 - a program that does not check says nothing more
        return False
    i = call if call is not None else p.calls - 1
    for c in p.ops:
        if c.op != "pad" or c.args[0] not in env or c.out not in env:
            continue
        for a, out in zip(env[c.args[0]].shape, env[c.out].shape):
            if 0 <= i < len(a.values) and i < len(out.values) and a.values[i] > 0 and out.values[i] == 0:
                return True
    return False


def trigger(p: Program, call: int | None = None) -> str:
    """What sets the bug off beyond its ops, as a phrase ("an aliased input mutated in place", "a length read with
    .tolist()", "an empty (size-0) input", "an input that negative pad widths crop to size 0" at the failing
    `call`), or "": the features the shrinker could not take away."""
    from fuzz.program.opdb import OPS

    specs = [(c, OPS[c.op]) for c in p.ops if c.op in OPS]
    parts = ["an input that negative pad widths crop to size 0"] if _cropped_to_empty(p, call) else []
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
    if len(parts) < 2 and any(_size_at(p, d, call) == 0 for x in p.inputs for d in x.shape):  # no elements at all
        parts.append("an empty (size-0) input")
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
    cause = trigger(p, v.call if isinstance(v.call, int) else None)
    if dynamic and dynamic.startswith("on ") and cause:
        where = f" {dynamic}, with {cause},"
    elif cause:
        where = f" on {cause}" + (f" {dynamic}" if dynamic else "")
    else:
        where = f" {dynamic}" if dynamic else ""
    if requires_grad(p):  # the shrinker tries backward -> False: a shrunk program keeps it only if needed
        where += ("," if where and not where.endswith(",") else "") + " with inputs that require grad,"
    shown = shown_sizes(p, v, summary)
    at = f" at {_sizes_text(shown)}" if shown else ""
    needed = needed_options(p, summary)
    under = f" ({', '.join(f'{k}={v!r}' for k, v in needed.items())})" if needed else ""
    return scrub(f"{tags} {ops}{where} {_symptom(v)}{at}{under}")


def requires_grad(p: Program) -> bool:
    """Whether the program's inputs require grad: a backward case with a floating input that is no view (an
    integer input cannot require grad, so a backward case of int16 inputs runs forward only)."""
    from fuzz.program.dtypes import is_floating

    return bool(p.settings.backward) and any(is_floating(x.dtype) and x.alias is None for x in p.inputs)


def needed_options(p: Program, summary: dict | None) -> dict:
    """The program's compile options that the bug needs: those whose flip alone made it pass in triage
    (ablation's flags_turning_off), with the program's values; without such flips, the options and mode a
    finished shrink kept where nothing pinned them (`options_kept`). A title names them: a cudagraphs-only bug
    is filed under cudagraphs."""
    options = p.settings.options or {}
    flips = (summary or {}).get("flags_turning_off") or []
    kept = (summary or {}).get("options_kept")
    if not flips and isinstance(kept, dict):
        return dict(kept)
    keys = [k for flip in flips if isinstance(flip, dict) and len(flip) == 1 for k in flip]
    return {k: options[k] for k in keys if k in options}


def _pinned(text: str, field: str) -> bool:
    """Whether a minimal signature's text names `field` (marks, mode, flags) with a value: the shrinker then keeps
    it, needed or not."""
    m = re.search(rf"\| {field}: ([^|]*?) (?:\||$)", text)
    return bool(m) and m.group(1).strip() != "-"


def entry_summary(entry) -> dict | None:
    """What is known of a shrunk entry's bug beyond its program: its triage's summary (ablation.json), plus what
    its shrink says. `marks_unproven`: its marks and dynamic=True may not be needed (its minimal signature pins
    them, or the shrink ran out of time before trying to drop them). `options_kept`: the compile options and mode
    a finished shrink kept where its signature pinned neither (so the bug needs them). None when nothing is known."""
    from fuzz.findings.triage import load_ablation

    doc = load_ablation(entry.path)
    summary = dict(doc["summary"]) if doc and isinstance(doc.get("summary"), dict) else {}
    if getattr(entry.signature, "minimal", False):
        text = getattr(entry.signature, "text", "") or ""
        shrink = (getattr(entry, "meta", None) or {}).get("shrink")
        finished = isinstance(shrink, dict) and not shrink.get("timed_out") and not shrink.get("interrupted")
        if _pinned(text, "marks") or not finished:
            summary["marks_unproven"] = True
        p = getattr(entry, "program", None)
        if finished and not (_pinned(text, "flags") or _pinned(text, "mode")) and isinstance(p, Program):
            kept = dict(p.settings.options or {})
            kept.update({"mode": p.settings.mode} if p.settings.mode else {})
            if kept:
                summary["options_kept"] = kept
    return summary or None
