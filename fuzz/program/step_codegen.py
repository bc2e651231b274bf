"""StepProgram -> Python source.

`module_source(p)` is the program as plain torch code: a function
`steps(dev, sync, mark_step, observe, donate, f64=False)` whose hooks are the
real torch_xla calls on the XLA device and no-ops on CPU. The backend executes
exactly this text; `step_repro_source(p)` adds the comparison rule (copied from
fuzz/judge/compare.py) and a main() that runs eager and XLA and exits 1 on any
disagreement, so the in-process verdict and the repro cannot drift apart.
"""

from __future__ import annotations

import inspect
import json

from fuzz.judge import compare as _compare
from fuzz.program.quoting import doc_text
from fuzz.program.step_ir import OPS, StepProgram, check

INDENT = "    "


def _observe_lines(step, in_loop: bool) -> list[str]:
    how = step.params.get("how", "cpu")
    # In a loop the label carries the repetition, so a report says which one.
    label = (lambda n: f'f"{n}@{{r}}"') if in_loop else (lambda n: repr(n))
    return [f"observe({label(n)}, {n}.{how}())" for n in step.args]


def _step_lines(step, in_loop: bool) -> list[str]:
    spec = OPS[step.op]
    if spec.kind == "observe":
        return _observe_lines(step, in_loop)
    text = spec.render(step.args, step.params)
    return [f"{step.out} = {text}" if spec.binds else text]


def steps_lines(p: StepProgram) -> list[str]:
    lines = ["def steps(dev, sync, mark_step, observe, donate, f64=False):",
             f"{INDENT}dt = torch.float64 if f64 and DTYPE.is_floating_point else DTYPE"]
    for i, b in enumerate(p.blocks):
        ind = INDENT
        if b.repeat > 1 or b.sizes:
            syms = list(b.sizes)
            lines.append(f"{INDENT}# block {i}: {b.repeat} repetitions")
            if syms:
                per_rep = [tuple(b.sizes[s][r] for s in syms) for r in range(b.repeat)]
                target = syms[0] if len(syms) == 1 else "(" + ", ".join(syms) + ")"
                vals = [v[0] for v in per_rep] if len(syms) == 1 else per_rep
                lines.append(f"{INDENT}for r, {target} in enumerate({list(vals)!r}):")
            else:
                lines.append(f"{INDENT}for r in range({b.repeat}):")
            ind = INDENT * 2
        for s in b.steps:
            lines += [ind + ln for ln in _step_lines(s, ind != INDENT)]
    return lines


_HELPERS = '''

def rand(shape, seed, dt, dev):
    """Seeded values made on the host (the same for every device), rounded to
    the program's dtype, then moved to dev."""
    g = torch.Generator().manual_seed(seed)
    if DTYPE.is_floating_point:
        x = torch.randn(shape, generator=g)
    else:
        x = torch.randint(-4, 5, shape, generator=g)
    return x.to(DTYPE).to(dt).to(dev)


def keep(value, f64=False):
    """An observed value as a CPU tensor that later in-place ops cannot touch."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    dt = torch.float64 if f64 and DTYPE.is_floating_point else DTYPE
    return torch.tensor(value, dtype=dt)


def run_eager(f64=False):
    """[(label, value)] of every observation, on CPU; the sync hooks are no-ops."""
    seen = []
    nop = lambda *a: None
    steps("cpu", nop, nop, lambda label, v: seen.append((label, keep(v, f64))), nop, f64)
    return seen
'''


def module_source(p: StepProgram) -> str:
    check(p)
    head = ["import torch", "", f"DTYPE = torch.{p.dtype}", f"ENV = {json.dumps(p.settings.env())}",
            f"DONOR_CONFIG = {p.settings.donor_config!r}"]
    return "\n".join(head) + "\n" + _HELPERS + "\n\n" + "\n".join(steps_lines(p)) + "\n"


def compare_source() -> str:
    src = inspect.getsource(_compare)
    # drop the module docstring and the torch import: the repro has both already
    body = src.split('"""', 2)[2].replace("import torch\n", "", 1)
    return "# The comparison rule (float64 reference, per-dtype tolerance).\n" + body.strip() + "\n"


_MAIN = '''

def show(v):
    return v.flatten()[:8].tolist() if v.dim() else v.item()


def main():
    try:
        expected = run_eager()
    except Exception as e:
        expected = e
    try:
        ref64 = run_eager(f64=True) if DTYPE.is_floating_point else None
    except Exception:
        ref64 = None
    if DONOR_CONFIG:
        torch_xla._XLAC._xla_set_enable_alias_with_buffer_donor_config(True)
    actual, error = [], None
    donate = lambda t: torch_xla._XLAC._set_buffer_donation(t, True)
    try:
        steps(torch_xla.device(), torch_xla.sync, xm.mark_step,
              lambda label, v: actual.append((label, keep(v))), donate)
        torch_xla.sync()
    except Exception as e:
        error = e
    if isinstance(expected, Exception):
        if error is not None:
            print(f"eager and XLA both raise ({type(expected).__name__}); not a compiler bug")
            sys.exit(0)
        print(f"FAIL: eager raised {type(expected).__name__}: {expected}; XLA did not")
        sys.exit(1)
    failed = False
    for i, (label, want) in enumerate(expected):
        if i >= len(actual):
            break
        got = actual[i][1]
        bad = compare_tensor(got, want, ref64[i][1] if ref64 else None)
        failed |= bad is not None
        print(f"observation {i} {label}: expected {show(want)}, actual {show(got)}"
              + (f"  MISMATCH {bad[0]} {bad[1]}" if bad else ""))
    if error is not None:
        print(f"FAIL: XLA raised {type(error).__name__}: {error}")
        failed = True
    print("FAIL: XLA and eager disagree" if failed else "OK: XLA and eager agree")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
'''


def step_repro_source(p: StepProgram, title: str = "") -> str:
    """A standalone script (torch and torch_xla only) that replays p on the XLA
    device with its syncs, prints expected vs actual per observation, and exits
    1 on disagreement, 0 on agreement."""
    mod = module_source(p)
    env = p.settings.env()
    head = [f'"""{doc_text(title or "shapefuzz torch_xla repro")}', "",
            "Runs the steps eagerly on CPU (and in float64 as a reference) and on the XLA",
            "device (PJRT_DEVICE=CPU unless set); exits 1 when they disagree, 0 when they agree.",
            '"""', "import os", "import sys", "",
            "# torch_xla reads these at import time.",
            'os.environ.setdefault("PJRT_DEVICE", "CPU")']
    head += [f"os.environ[{k!r}] = {v!r}" for k, v in env.items()]
    head += ["", "import warnings  # noqa: E402", "", "import torch  # noqa: E402", "",
             "try:", "    import torch_xla  # noqa: E402", "    import torch_xla.core.xla_model as xm  # noqa: E402",
             "except ImportError:  # exit 77: skipped, neither pass nor fail",
             "    print('SKIP: cannot run this repro here: it needs torch_xla, which this Python does not have', "
             "file=sys.stderr)", "    sys.exit(77)", "",
             'warnings.filterwarnings("ignore", "Use torch_xla.sync instead", DeprecationWarning)', ""]
    return "\n".join(head) + "\n" + mod.replace("import torch\n", "", 1) + "\n\n" + compare_source() + _MAIN
