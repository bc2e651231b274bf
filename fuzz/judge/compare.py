"""Output comparison, the rule every verdict and every repro.py uses.

This module imports only torch: codegen copies its source into each repro, so
the standalone script judges exactly as shapefuzz does.

Rule (after torch._dynamo.utils.same with fp64_ref): a floating output passes
when it is allclose to eager at the dtype's tolerance, or when its RMS error
against the float64 reference is at most `multiplier * eager's + tol / 10`.
Integers and bools must be equal. NaN/+inf/-inf positions must agree with
eager, unless they agree with the float64 reference cast to the same dtype.
An output of indices (argmax, argmin, sort's indices) passes when the values
it picks from its source are those eager's indices pick (`indices_agree`):
ties may pick any tied index. A value that a discontinuous op reads (a comparison, a rounding, a
data-dependent size: one element decides) passes `value_agrees`: compare_tensor's rule, and the rule of
the float64 reference element by element wherever it differs from eager's beyond the tolerance.
"""

import torch

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


def value_agrees(actual, expected, ref64):
    """None when `actual`, a value a discontinuous op reads, passes against eager's `expected`: by
    compare_tensor, and at each element where it is not allclose to eager's, its error against `ref64` is at
    most the multiplier times eager's there plus tol / 10 (an average would hide the one element that
    decides). Else (kind, detail)."""
    bad = compare_tensor(actual, expected, ref64)
    if bad or not isinstance(actual, torch.Tensor) or not actual.is_floating_point():
        return bad
    if not isinstance(ref64, torch.Tensor) or ref64.shape != actual.shape:
        return None  # compare_tensor judged it without a reference: allclose to eager
    a, e, r = (t.detach().cpu().double() for t in (actual, expected, ref64))
    tol = TOLERANCES.get(actual.dtype, 1e-4)
    far = torch.isfinite(a) & torch.isfinite(e) & torch.isfinite(r) & ~torch.isclose(a, e, rtol=tol, atol=tol)
    worse = far & ((a - r).abs() > FP64_MULTIPLIER.get(actual.dtype, 2.0) * (e - r).abs() + tol / 10)
    if not worse.any():
        return None
    k = int(((a - r).abs() * worse).argmax())  # the worst element compiled computes further off than eager
    return "values", {"elements": int(worse.sum()), "numel": a.numel(), "compiled": a.flatten()[k].item(),
                      "eager": e.flatten()[k].item(), "fp64": r.flatten()[k].item()}


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
