"""Resampling: interpolate (nearest, nearest-exact, linear, bilinear,
trilinear; align_corners both ways for the linear modes) of 3-, 4- and 5-d
tensors, by a scale factor or to a literal size (the output static while
the input's dims may be dynamic), and pixel_shuffle on a literal channel
count."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import drawn, OPS, _fresh
from fuzz.program.symbolic import Dim

_FLOAT = frozenset(D.FLOATING)
_MODES = {3: ("nearest", "nearest-exact", "linear"), 4: ("nearest", "nearest-exact", "bilinear"),
          5: ("nearest", "nearest-exact", "trilinear")}
_LINEAR = ("linear", "bilinear", "trilinear")
_SIZES = (1, 3, 4, 7)  # literal out sizes: 1 collapses a dim; 7 is odd and larger than most inputs


def _interp_params(a):
    def draw(draw_):
        mode = draw_(st.sampled_from(_MODES[a.rank]))
        if draw_(st.integers(0, 2)) == 0:  # a third to a literal size
            p = {"mode": mode, "size": [draw_(st.sampled_from(_SIZES)) for _ in range(a.rank - 2)]}
        else:  # halving only where no dim would become empty
            halves = all(_scaled(v, 0.5) >= 1 for d in a.shape[2:] for v in d.values)
            p = {"mode": mode, "scale": draw_(st.sampled_from([2, 0.5, 3, 1.5] if halves else [2, 3, 1.5]))}
        if mode in _LINEAR:
            p["align_corners"] = draw_(st.booleans())
        return p
    return drawn(draw)


def _scaled(v, s):
    return int(v * s)  # floor(size * scale), as interpolate computes it for a given scale factor


def _interp_check(args, p):
    a = args[0]
    if a.dtype not in _FLOAT or a.rank not in _MODES or p.get("mode") not in _MODES[a.rank]:
        return "interpolate takes a floating (N, C, W), (N, C, H, W) or (N, C, D, H, W) tensor and a mode for its rank"
    if ("size" in p) == ("scale" in p):
        return "interpolate takes a scale or a size"
    if ("align_corners" in p) != (p["mode"] in _LINEAR):
        return "align_corners goes with the linear modes only"
    if any(d.min < 1 for d in a.shape):
        return "interpolate of a tensor that is empty at some call (eager refuses it)"
    if "size" in p:
        size = p["size"]
        if not (isinstance(size, list) and len(size) == a.rank - 2
                and all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 64 for s in size)):
            return f"interpolate's size must be {a.rank - 2} integers in [1, 64]"
        return None
    if not isinstance(p["scale"], (int, float)) or isinstance(p["scale"], bool) or not 0 < p["scale"] <= 4:
        return "interpolate's scale must be a number in (0, 4]"
    if any(_scaled(v, p["scale"]) < 1 for d in a.shape[2:] for v in d.values):
        return "interpolate to an empty size at some call"
    return None


def _interp_shape(a, p):
    if "size" in p:
        return tuple(a.shape[:2]) + tuple(Dim.literal(s, a.calls) for s in p["size"])
    return tuple(a.shape[:2]) + tuple(d.mapped(f"*{p['scale']}", lambda v: _scaled(v, p["scale"]))
                                      for d in a.shape[2:])


def _interp_render(n, p, infos):
    ac = f", align_corners={p['align_corners']}" if "align_corners" in p else ""
    how = f"size={tuple(p['size'])}" if "size" in p else f"scale_factor={p['scale']}"
    return f"F.interpolate({n[0]}, {how}, mode={p['mode']!r}{ac})"


OPS.add(OpSpec(
    name="interpolate", family="resample", arity=1,
    accepts=lambda a: a.dtype in _FLOAT and a.rank in _MODES and all(d.min >= 1 for d in a.shape),
    params=lambda args: _interp_params(args[0]), check=_interp_check,
    infer=lambda args, p, out: _fresh(args[0], out, shape=_interp_shape(args[0], p)),
    render=_interp_render, guards=lambda args, p: {s for d in args[0].shape[2:] for s in d.syms},
    api="F.interpolate", doc="interpolate of a 3-, 4- or 5-d tensor by a scale factor or to a literal size, "
                             "in every mode for its rank"))


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
