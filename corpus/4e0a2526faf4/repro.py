"""shapefuzz 4e0a2526faf4: compiled-only-error | RuntimeError | ToLiteral() called on deleted or donated buffer: INVALID_ARGUMENT: Buffer has been deleted or donated. | - | device: xla

Runs the steps eagerly on CPU (and in float64 as a reference) and on the XLA
device (PJRT_DEVICE=CPU unless set); exits 1 when they disagree, 0 when they agree.
"""
import os
import sys

# torch_xla reads these at import time.
os.environ.setdefault("PJRT_DEVICE", "CPU")

import warnings  # noqa: E402

import torch  # noqa: E402

try:
    import torch_xla  # noqa: E402
    import torch_xla.core.xla_model as xm  # noqa: E402
except ImportError:  # exit 77: skipped, neither pass nor fail
    print('SKIP: cannot run this repro here: it needs torch_xla, which this Python does not have', file=sys.stderr)
    sys.exit(77)

warnings.filterwarnings("ignore", "Use torch_xla.sync instead", DeprecationWarning)


DTYPE = torch.int64
ENV = {}
DONOR_CONFIG = False


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


def steps(dev, sync, mark_step, observe, donate, f64=False):
    dt = torch.float64 if f64 and DTYPE.is_floating_point else DTYPE
    t0 = torch.tensor([1], dtype=dt, device=dev)
    t2 = torch.full((1,), -2, dtype=dt, device=dev)
    t2.copy_(t0)
    sync()
    t2.mul_(t2)
    sync()
    observe('t0', t0.item())


# The comparison rule (float64 reference, per-dtype tolerance).
# dtype -> tol: the allclose atol/rtol, and a tenth of it is the fp64 rule's slack.
TOLERANCES = {torch.float64: 1e-7, torch.float32: 1e-4, torch.float16: 1e-3, torch.bfloat16: 1e-2}
FP64_MULTIPLIER = {torch.float16: 3.0, torch.bfloat16: 3.0}


def _nonfinite_code(t):
    code = torch.zeros(t.shape, dtype=torch.int8)
    code[torch.isnan(t)] = 1
    code[torch.isposinf(t)] = 2
    code[torch.isneginf(t)] = 3
    return code


def _rmse(a, b):
    return (a - b).pow(2).mean().sqrt().item() if a.numel() else 0.0


def compare_tensor(actual, expected, ref64):
    """None when `actual` passes against eager `expected` (and `ref64`), else
    (kind, detail) with kind in type/shape/dtype/nonfinite/values."""
    if not isinstance(actual, torch.Tensor) or not isinstance(expected, torch.Tensor):
        if type(actual) is not type(expected) or actual != expected:
            return "type", {"actual": repr(actual)[:80], "expected": repr(expected)[:80]}
        return None
    if actual.shape != expected.shape:
        return "shape", {"actual": list(actual.shape), "expected": list(expected.shape)}
    if actual.dtype != expected.dtype:
        return "dtype", {"actual": str(actual.dtype), "expected": str(expected.dtype)}
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if not a.is_floating_point():
        if torch.equal(a, e):
            return None
        wrong = (a != e).sum().item()
        return "values", {"mismatched": wrong, "numel": a.numel()}
    r = ref64.detach().cpu() if isinstance(ref64, torch.Tensor) and ref64.shape == a.shape else None
    ca, ce = _nonfinite_code(a), _nonfinite_code(e)
    if not torch.equal(ca, ce) and (r is None or not torch.equal(ca, _nonfinite_code(r.to(a.dtype)))):
        return "nonfinite", {"positions": int((ca != ce).sum()), "numel": a.numel()}
    finite = (ca == 0) & (ce == 0)
    if r is not None:
        finite &= torch.isfinite(r)
    a64, e64 = a.double()[finite], e.double()[finite]
    tol = TOLERANCES.get(a.dtype, 1e-4)
    if torch.allclose(a64, e64, rtol=tol, atol=tol):
        return None
    diff = (a64 - e64).abs()
    detail = {"max_abs": diff.max().item(),
              "max_rel": (diff / e64.abs().clamp_min(1e-12)).max().item()}
    if r is not None:
        r64 = r.double()[finite]
        err, eager_err = _rmse(a64, r64), _rmse(e64, r64)
        detail.update(compiled_vs_fp64=err, eager_vs_fp64=eager_err)
        if err <= FP64_MULTIPLIER.get(a.dtype, 2.0) * eager_err + tol / 10:
            return None
    return "values", detail


def compare_outputs(actual, expected, ref64):
    """Compare every output; a list of (index, kind, detail), empty when all pass."""
    actual, expected = tuple(actual), tuple(expected)
    if len(actual) != len(expected):
        return [(-1, "arity", {"actual": len(actual), "expected": len(expected)})]
    ref64 = tuple(ref64) if ref64 is not None else (None,) * len(actual)
    out = []
    for i, (a, e, r) in enumerate(zip(actual, expected, ref64)):
        bad = compare_tensor(a, e, r)
        if bad:
            out.append((i, bad[0], bad[1]))
    return out


def indices_agree(kind, source, dim, flag, actual, expected):
    """Whether the indices `actual` pick from `source` (eager's values) what
    eager's `expected` pick, under compare_tensor's rule: the value at each
    compiled index is a true max/min (kind "max"/"min"; dim None: of the
    flattened source; flag: keepdim), or the compiled indices are a
    permutation along `dim` that sorts it (kind "sort")."""
    if not all(isinstance(t, torch.Tensor) for t in (source, actual, expected)) or actual.shape != expected.shape:
        return False
    src, a, e = source.detach().cpu(), actual.detach().cpu().long(), expected.detach().cpu().long()
    if src.dim() == 0:
        src, dim = src.reshape(1), 0
    if kind in ("max", "min"):
        if dim is None:
            src, dim = src.reshape(-1), 0
            a, e = a.reshape(1), e.reshape(1)
        elif not flag:
            a, e = a.unsqueeze(dim), e.unsqueeze(dim)
    elif kind == "sort":
        if a.shape != src.shape or not torch.equal(a.sort(dim).values, e.sort(dim).values):
            return False  # not the same permutation of positions
    else:
        return False
    if a.dim() != src.dim() or (a < 0).any() or (a >= src.shape[dim]).any():
        return False
    return compare_tensor(src.gather(dim, a), src.gather(dim, e), None) is None


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
