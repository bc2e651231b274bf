"""Reports in the PyTorch/XLA issue layout: torch_xla step-program entries
(render_steps) and torch.compile programs on the openxla backend
(render_openxla). The shared pieces (scrubbing, environment, error logs,
ablation tables) are fuzz/findings/report/issue.py's."""

from __future__ import annotations

import os

from fuzz.findings.report import markdown as md
from fuzz.findings.report.issue import (_fence, _fmt, _repro_text, ablation_table, compiled_parts, environment_text,
                                  error_log, scrub)
from fuzz.findings.report.title import _symptom
from fuzz.judge.verdict import Outcome, Verdict


def render_openxla(entry) -> str:
    """The PyTorch/XLA layout for a torch.compile entry on the openxla backend."""
    k = compiled_parts(entry)
    title, description, repro, observed, log, doc = (k[n] for n in ("title", "description", "repro", "observed",
                                                                    "log", "doc"))
    env_text, env_note, env = k["env_text"], k["env_note"], k["env"]
    obs, _, expected = observed.partition("\nExpected: ")
    parts = [f"# {md.text(title, 400)}", "", "## 🐛 Bug", "", description, "", "## To Reproduce", "",
             "Run the script below (it exits 1 while the bug stands):", "", _fence(repro, "python"), "",
             obs.strip(), ""]
    if log:
        parts += [_fence(log), ""]
    parts += ["## Expected behavior", "", ("Expected: " + expected.strip()) if expected else
              "The same result as eager on CPU.", "", "## Environment", "",
              f" - reproducible on XLA backend [CPU/TPU/CUDA]: {env.get('gpu') and 'CUDA' or 'CPU'}",
              f" - torch_xla version: {md.code(env.get('torch_xla') or 'unknown', 60)}",
              f" - torch version: {md.code(env.get('torch') or 'unknown', 60)}", ""]
    if env_note:
        parts += [env_note, ""]
    parts += [_fence(env_text), "", "## Additional context", ""]
    parts += [ablation_table(doc), ""] if doc else ["None.", ""]
    return "\n".join(parts)


_STEP_KIND_PHRASE = {"inplace": "in-place ops", "setitem": "slice assignment", "view": "views",
                     "pointwise": "out-of-place ops", "donate": "explicit buffer donation"}


def _steps_title(p, v: Verdict) -> str:
    kinds = [_STEP_KIND_PHRASE[k] for k in _STEP_KIND_PHRASE if any(
        _step_kind(s.op) == k for _, s in p.steps())]
    what = ", ".join(kinds[:3]) or "ops"
    syncs = sum(_step_kind(s.op) == "sync" for _, s in p.steps())
    return scrub(f"[torch_xla] {what} and {syncs} sync point{'s' * (syncs != 1)}: "
                 f"XLA {_symptom(v)} where eager on CPU does not")


def _step_kind(op: str) -> str:
    from fuzz.program.step_ir import OPS

    return OPS[op].kind if op in OPS else ""


def _steps_description(p, v: Verdict) -> str:
    n = sum(len(b.steps) for b in p.blocks)
    loops = [b for b in p.blocks if b.repeat > 1]
    text = (f"A straight-line program of {n} lazy-tensor steps on the XLA device (dtype {p.dtype}), cut into graphs "
            "by `torch_xla.sync()` / `xm.mark_step()`")
    if loops:
        text += f", {len(loops)} block{'s' * (len(loops) > 1)} of it repeated so that cached executables are reused"
        if any(b.sizes for b in loops):
            text += " (with sizes changing between repetitions)"
    text += ", gives a different result on XLA than the same program run eagerly on CPU. "
    if v.outcome is Outcome.COMPILED_ERROR:
        text += f"XLA {md.text(scrub(_symptom(v)), 300)}; eager runs it to the end."
    else:
        text += (f"The first disagreement is at {md.text(scrub(v.where or 'an observation'), 200)}; the script prints every observed "
                 "value with the expected (eager) one.")
    env = p.settings.env()
    if env:
        text += " It needs " + ", ".join(f"`{k}={val}`" for k, val in sorted(env.items())) + " (set by the script)."
    if p.settings.donor_config:
        text += " It enables the buffer-donor config (`_xla_set_enable_alias_with_buffer_donor_config(True)`)."
    nums = v.numbers or {}
    counts = {k: nums[k] for k in ("compiles", "cached_compiles", "executes") if k in nums}
    if counts:
        text += " torch_xla metrics for the XLA run: " + ", ".join(f"{k} {md.text(val, 20)}"
                                                                   for k, val in counts.items()) + "."
    return scrub(text)


def render_steps(entry) -> str:
    """The PyTorch/XLA issue layout for a step-program entry."""
    p, v = entry.program, entry.verdict
    env_text, env_note = environment_text(entry.env)
    repro = _repro_text(entry).replace("Repro: torch.compile vs eager over a size schedule",
                                       "Repro: a torch_xla lazy-tensor sequence vs eager on CPU")
    nums = v.numbers or {}
    parts = [f"# {md.text(_steps_title(p, v), 400)}", "", "## 🐛 Bug", "", _steps_description(p, v), "", "## To Reproduce", "",
             "Run the script below with `PJRT_DEVICE=CPU` (it exits 1 while the bug stands):", "",
             _fence(repro, "python"), ""]
    log = error_log(v)
    if log:
        parts += [_fence(log), ""]
    elif "max_abs" in nums:
        parts += [f"Observed: at {md.text(scrub(v.where), 200)}, max abs error {md.text(_fmt(nums['max_abs']), 40)}"
                  + (f"; against a float64 run: XLA {md.text(_fmt(nums['compiled_vs_fp64']), 40)}, eager "
                     f"{md.text(_fmt(nums.get('eager_vs_fp64', '?')), 40)}" if "compiled_vs_fp64" in nums else "")
                  + ".", ""]
    elif "mismatched" in nums:
        parts += [f"Observed: at {md.text(scrub(v.where), 200)}, {md.text(nums['mismatched'], 20)} of "
                  f"{md.text(nums.get('numel', '?'), 20)} elements differ.", ""]
    parts += ["## Expected behavior", "", "Every observed value equals eager's on CPU, and no error is raised.", "",
              "## Environment", "",
              f" - Reproducible on XLA backend [CPU/TPU/CUDA]: {os.environ.get('PJRT_DEVICE', 'CPU')}",
              f" - torch_xla version: {md.code(entry.env.get('torch_xla') or 'unknown', 60)}",
              f" - torch version: {md.code(entry.env.get('torch') or 'unknown', 60)}", ""]
    if env_note:
        parts += [md.text(env_note), ""]
    parts += [_fence(env_text), ""]
    return "\n".join(parts)
