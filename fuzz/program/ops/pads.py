"""F.pad in all four modes, with literal and size-relative widths (negative ones crop)."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import (OpSpec, check_width, py_literal, render_width,
                                 width_syms, width_values, widths)
from fuzz.program.ops.common import drawn, OPS
from fuzz.program.ops.common import (_fresh)
from fuzz.program.symbolic import Dim, ValueInfo

# ---- pads ----------------------------------------------------------------------

PAD_MODES = ("constant", "reflect", "replicate", "circular")
_PAD_VALUES_FLOAT = [0.0, 1.0, -2.5, float("-inf")]
_PAD_VALUES_INT = [0, 1, -3]
_CROP = (False, True)  # False first: shrinks to the drawn widths


def cropped_dims(widths: list) -> int:
    """How many dims a pad's widths crop (a literal negative width on either side)."""
    return sum(1 for i in range(0, len(widths), 2) if any(isinstance(w, int) and w < 0 for w in widths[i:i + 2]))


def _pad_dims(a: ValueInfo, pairs: int):
    """Dims padded by `pairs` width pairs: the last `pairs` dims, innermost first."""
    return [a.rank - 1 - i for i in range(pairs)]


def _mode_rank_ok(mode, rank, pairs):
    if mode == "constant":
        return 1 <= pairs <= rank
    return rank in (pairs + 1, pairs + 2)


def _pad_variant_ok(mode, a: ValueInfo, pairs: int) -> bool:
    """Rank, dtype and sizes allow `mode` padding the last `pairs` dims. Non-constant
    modes need every dim non-empty at every call, except a leading batch dim."""
    if not _mode_rank_ok(mode, a.rank, pairs):
        return False
    if mode == "constant":
        return True
    if mode in ("reflect", "replicate") and a.dtype == "bool":
        return False
    batch = 1 if a.rank == pairs + 2 else 0
    return all(d.min > 0 for d in a.shape[batch:])


def _width_bounds(mode, dim: Dim, other=None):
    """Per-call [lo, hi] for one width of a pad on `dim`; `other` is the
    already chosen opposite width of a constant pad (crops must leave >= 0)."""
    v = dim.values
    if mode == "constant":
        # eager crops before it pads: the crops alone must leave >= 0
        used = other if other is not None else (0,) * len(v)
        return tuple(-(x + min(u, 0)) for x, u in zip(v, used)), (4,) * len(v)
    if mode == "reflect":
        return (0,) * len(v), tuple(x - 1 for x in v)
    if mode == "circular":
        return (0,) * len(v), tuple(v)
    return (0,) * len(v), (4,) * len(v)


def _pad_params(a: ValueInfo):
    modes = [m for m in PAD_MODES if _pad_mode_possible(m, a)]

    # A computed float value of rank 2 or 3 (what mm and bmm take) draws constant pads of two dims more
    # often: a cropping pad of a computed value feeding a matrix op was 0 in 3000 programs without it.
    crop_prone = not a.is_input and D.is_floating(a.dtype) and a.rank in (2, 3) and "constant" in modes

    def draw(draw_):
        mode = draw_(st.sampled_from(modes + ["constant"] * (3 if crop_prone else 0)))
        pairs_ok = [p for p in (1, 2, 3) if _pad_variant_ok(mode, a, p)]
        pairs = draw_(st.sampled_from(pairs_ok + [2] * (3 if crop_prone and mode == "constant" and 2 in pairs_ok
                                                        else 0)))
        ws = []
        dims = _pad_dims(a, pairs)
        # A crop of every padded dim, at times (without it a cropping pad of two dims fed a matrix op in 0 of
        # 600 programs): its left widths are -1, where each dim is >= 1 at every call.
        crop = mode == "constant" and pairs >= 2 and all(a.shape[d].min >= 1 for d in dims) \
            and draw_(st.sampled_from(_CROP + (True, True) * crop_prone))
        # A crop of a computed value is at times a shift (-1 left, 1 right): the sizes stay the symbols, so
        # a matrix op can take a fresh operand that fits (none fits a derived size such as s0-1). Else, at
        # times, it only shrinks (right widths 0, or -1 where the dim is >= 2 at every call): before,
        # shrinking crops consumed by matrix products (those that make their weight, or gram) were 0 in 3000.
        how = draw_(st.sampled_from(("shift", "shrink", "shrink"))) if crop and crop_prone else "free"
        for d in dims:
            lo, hi = _width_bounds(mode, a.shape[d])
            left = -1 if crop else draw_(widths(a, lo, hi))
            lo, hi = _width_bounds(mode, a.shape[d], width_values(left, a) if mode == "constant" else None)
            if how == "shift":
                right = 1
            elif how == "shrink":
                right = draw_(st.sampled_from((0, -1))) if a.shape[d].min >= 2 else 0
            else:
                right = draw_(widths(a, lo, hi))
            ws += [left, right]
        p = {"mode": mode, "pad": ws}
        if mode == "constant":
            vals = _PAD_VALUES_FLOAT if D.is_floating(a.dtype) else _PAD_VALUES_INT
            if a.dtype == "uint8":  # a pad value must fit the dtype (eager checks it)
                vals = [v for v in vals if v >= 0]
            p["value"] = draw_(st.sampled_from(vals if a.dtype != "bool" else [0, 1]))
        return p

    return drawn(draw)


def _pad_mode_possible(mode, a: ValueInfo):
    return any(_pad_variant_ok(mode, a, p) for p in (1, 2, 3))


def _pad_check(args, p):
    a = args[0]
    mode, ws = p.get("mode"), p.get("pad")
    if mode not in PAD_MODES:
        return f"pad mode {mode!r} is not one of {PAD_MODES}"
    if not isinstance(ws, list) or not ws or len(ws) % 2:
        return "pad widths must be a non-empty list of even length"
    pairs = len(ws) // 2
    if not _pad_variant_ok(mode, a, pairs):
        return f"{mode} pad of {pairs} dims does not take a rank-{a.rank} {a.dtype} tensor with these sizes"
    for w in ws:
        if (r := check_width(w, a)):
            return r
    for i, d in enumerate(_pad_dims(a, pairs)):
        lv, rv = width_values(ws[2 * i], a), width_values(ws[2 * i + 1], a)
        lo, hi = _width_bounds(mode, a.shape[d])
        if mode == "constant":
            if any(x + min(l, 0) + min(r, 0) < 0 for x, l, r in zip(a.shape[d].values, lv, rv)):
                return f"constant pad crops dim {d} below zero at some call"
            continue
        for wv in (lv, rv):
            if any(not (l <= w <= h) for w, l, h in zip(wv, lo, hi)):
                return f"{mode} pad width out of range for dim {d} at some call"
    return None


def _pad_infer(args, p, out):
    a = args[0]
    shape = list(a.shape)
    ws = p["pad"]
    for i, d in enumerate(_pad_dims(a, len(ws) // 2)):
        for w in (ws[2 * i], ws[2 * i + 1]):
            if isinstance(w, int):
                shape[d] = shape[d].plus(w)
            else:
                src = a.shape[w["dim"]]
                shape[d] = shape[d].plus(src.mapped(f"//{w['div']}", lambda v, k=w["div"]: v // k).plus(w["add"]))
    return _fresh(a, out, shape=tuple(shape))


def _pad_render(n, p, infos):
    ws = ", ".join(render_width(w, n[0]) for w in p["pad"])
    if p["mode"] == "constant":
        v = p.get("value", 0)
        return f"F.pad({n[0]}, ({ws},)" + (f", value={py_literal(v)})" if v else ")")
    return f"F.pad({n[0]}, ({ws},), mode={p['mode']!r})"


def _pad_guards(args, p):
    a = args[0]
    ws = p["pad"]
    g = set()
    for i, d in enumerate(_pad_dims(a, len(ws) // 2)):
        l, r = ws[2 * i], ws[2 * i + 1]
        crops = any(isinstance(w, int) and w < 0 or isinstance(w, dict) for w in (l, r))
        if p["mode"] != "constant" or crops:
            g |= set(a.shape[d].syms) | width_syms(l, a) | width_syms(r, a)
    return g


OPS.add(OpSpec(
    name="pad", family="pad", arity=1,
    accepts=lambda a: a.rank >= 1 and any(_pad_mode_possible(m, a) for m in PAD_MODES),
    params=lambda args: _pad_params(args[0]), check=_pad_check, infer=_pad_infer, render=_pad_render,
    guards=_pad_guards, api="F.pad", label_fn=lambda p: f"F.pad({p.get('mode', 'constant')})",
    doc="F.pad, all four modes; negative constant widths crop; widths may depend on sizes",
))


