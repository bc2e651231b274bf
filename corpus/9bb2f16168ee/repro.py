"""shapefuzz 9bb2f16168ee: divergence | output | families: pointwise,reduction,view | device: cuda

Runs the program eagerly (and in float64 as a reference) and compiled over the
size schedule; exits 1 when compiled and eager disagree, 0 when they agree.
"""
import sys
import torch
import torch.nn.functional as F

SEED = 0
DEVICE = 'cuda'
# The size schedule: one compiled callable is called once per entry.
SIZES = [{"s0": 1}]


def make(shape, dtype, scale, g, fp64):
    if dtype.is_floating_point:
        t = (torch.randn(shape, generator=g) * scale).to(dtype)
        t = t.double() if fp64 else t
    elif dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
    else:
        t = torch.randint(-8, 9, shape, generator=g).to(dtype)
    return t.to(DEVICE)


def make_inputs(call, fp64=False):
    """The inputs of one call, the same every time; fp64=True gives the float64 reference's."""
    s0 = SIZES[call]['s0']
    g = torch.Generator().manual_seed(SEED * 1000 + call)
    x0 = make((3 + 1 * 1 * s0 * s0,), torch.float32, 1.0, g, fp64)[3:].view((1, 1, s0, s0))
    return [x0]


def mark_inputs(x0):
    pass


def program(x0):
    v0 = x0.as_strided((x0.shape[0], x0.shape[1], x0.shape[2], x0.shape[3],), (x0.stride(0), x0.stride(1), x0.stride(2), x0.stride(3),), x0.storage_offset())
    v1 = torch.relu(v0)
    return (v1,)


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


def main():
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch._inductor.config.fallback_random = True
    compiled = torch.compile(program, backend='inductor', dynamic=True)
    failed = False
    for call, sizes in enumerate(SIZES):
        try:
            eager_inputs = make_inputs(call)
            expected = program(*eager_inputs)
        except Exception as e:
            eager_inputs, expected = None, e
        try:
            ref64_inputs = make_inputs(call, fp64=True)
            ref64 = program(*ref64_inputs)
        except Exception:
            ref64_inputs = ref64 = None
        inputs = make_inputs(call)
        mark_inputs(*inputs)
        try:
            actual = compiled(*inputs)
        except Exception as e:
            if isinstance(expected, Exception):
                print(f"call {call} {sizes}: eager and compiled both raise; not a compiler bug")
                continue
            print(f"call {call} {sizes}: compiled raised {type(e).__name__}: {e}")
            failed = True
            break
        if isinstance(expected, Exception):
            print(f"call {call} {sizes}: eager raised {type(expected).__name__}: {expected}; compiled returned")
            failed = True
            break
        problems = [("output", *bad) for bad in compare_outputs(actual, expected, ref64)]
        problems += [("input", *bad) for bad in compare_outputs(inputs, eager_inputs, ref64_inputs)]
        for where, i, kind, detail in problems:
            print(f"call {call} {sizes}: {where} {i}: {kind} mismatch {detail}")
            if kind in ("values", "nonfinite"):
                got = (actual if where == "output" else inputs)[i]
                want = (expected if where == "output" else eager_inputs)[i]
                print("  compiled:", got.flatten()[:8].tolist())
                print("  eager:   ", want.flatten()[:8].tolist())
        if problems:
            failed = True
            break
    print("FAIL: compiled and eager disagree" if failed else "OK: compiled and eager agree")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
