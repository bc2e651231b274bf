"""Resampling: interpolate (nearest, nearest-exact, linear, bilinear;
align_corners both ways for the linear modes) by a scale or to a size, and
pixel_shuffle on a literal channel count."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import OPS, _fresh
from fuzz.program.symbolic import Dim

_FLOAT = frozenset(D.FLOATING)
_MODES = {3: ("nearest", "nearest-exact", "linear"), 4: ("nearest", "nearest-exact", "bilinear")}


def _interp_params(a):
    @st.composite
    def draw(draw_):
        mode = draw_(st.sampled_from(_MODES[a.rank]))
        p = {"mode": mode, "scale": draw_(st.sampled_from([2, 0.5, 3, 1.5]))}
        if mode in ("linear", "bilinear"):
            p["align_corners"] = draw_(st.booleans())
        return p
    return draw()


def _scaled(v, s):
    return int(v * s)  # floor(size * scale), as interpolate computes it for a given scale factor


def _interp_check(args, p):
    a = args[0]
    if a.dtype not in _FLOAT or a.rank not in _MODES or p.get("mode") not in _MODES[a.rank]:
        return "interpolate takes a floating (N, C, W) or (N, C, H, W) tensor and a mode for its rank"
    if any(d.min < 1 for d in a.shape):
        return "interpolate of a tensor that is empty at some call (eager refuses it)"
    if any(_scaled(v, p["scale"]) < 1 for d in a.shape[2:] for v in d.values):
        return "interpolate to an empty size at some call"
    return None


def _interp_render(n, p, infos):
    ac = f", align_corners={p['align_corners']}" if "align_corners" in p else ""
    return f"F.interpolate({n[0]}, scale_factor={p['scale']}, mode={p['mode']!r}{ac})"


OPS.add(OpSpec(
    name="interpolate", family="resample", arity=1,
    accepts=lambda a: (a.dtype in _FLOAT and a.rank in _MODES and all(d.min >= 1 for d in a.shape)
                       and all(_scaled(v, 0.5) >= 1 for d in a.shape[2:] for v in d.values)),
    params=lambda args: _interp_params(args[0]), check=_interp_check,
    infer=lambda args, p, out: _fresh(args[0], out, shape=tuple(args[0].shape[:2]) + tuple(
        d.mapped(f"*{p['scale']}", lambda v: _scaled(v, p["scale"])) for d in args[0].shape[2:])),
    render=_interp_render, guards=lambda args, p: {s for d in args[0].shape[2:] for s in d.syms},
    api="F.interpolate", doc="interpolate by a scale factor in every mode for its rank"))


def _shuffle_ok(a):
    return a.rank >= 3 and a.shape[-3].is_literal and a.shape[-3].const % 4 == 0 and a.shape[-3].const > 0


OPS.add(OpSpec(
    name="pixel_shuffle", family="resample", arity=1, accepts=_shuffle_ok,
    params=lambda args: st.just({"r": 2}),
    check=lambda args, p: None if _shuffle_ok(args[0]) and p.get("r") == 2 else "pixel_shuffle needs C % 4 == 0",
    infer=lambda args, p, out: _fresh(args[0], out, shape=tuple(args[0].shape[:-3]) + (
        Dim.literal(args[0].shape[-3].const // 4, args[0].calls),
        args[0].shape[-2].mapped("*2", lambda v: v * 2), args[0].shape[-1].mapped("*2", lambda v: v * 2))),
    render=lambda n, p, i: f"F.pixel_shuffle({n[0]}, 2)", api="F.pixel_shuffle",
    doc="pixel_shuffle by 2 of a literal channel count"))
