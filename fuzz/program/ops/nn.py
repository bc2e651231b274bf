"""nn consumers of (often padded or sliced) tensors: conv1d/conv2d, batch_norm
(training and eval), layer_norm, group_norm, softmax, log_softmax,
embedding, dropout(p=0). Weights and running statistics are made in the
program from the input's own (symbolic) channel count (common_gen)."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec
from fuzz.program.ops.common import drawn, dtype_check, dtype_kw, with_dtype, OPS, _dim_in, _fresh, _view
from fuzz.program.ops.common_gen import dim_text, weight
from fuzz.program.symbolic import Dim

_FLOAT = frozenset(D.FLOATING)


def _spec(name, family, accepts, params, check, infer, render, guards=None, api="", doc="", label_fn=None):
    return OPS.add(OpSpec(name=name, family=family, arity=1, accepts=accepts, params=params,
                          check=lambda args, p: check(args[0], p), infer=lambda args, p, out: infer(args[0], p, out),
                          render=lambda n, p, i: render(n[0], p, i[0]),
                          guards=(lambda args, p: guards(args[0], p)) if guards else (lambda args, p: set()),
                          api=api, doc=doc, label_fn=label_fn))


# ---- convolution -----------------------------------------------------------------

def _conv_out(v, k, s, pad, dil):
    return (v + 2 * pad - dil * (k - 1) - 1) // s + 1


def _conv_fits(a, p, spatial) -> bool:
    """Every spatial dim at every call is non-empty (eager refuses an empty one, padded or not: "Only zero
    batch or zero channel inputs are supported") and long enough for the dilated kernel."""
    return all(v >= 1 and v + 2 * p["padding"] >= p["dilation"] * (p["kernel"] - 1) + 1
               for d in a.shape[-spatial:] for v in d.values)


def _kp(k, d, q):
    return {"kernel": k, "dilation": d, "padding": q}


def _conv(name, spatial):
    rank = spatial + 2

    def accepts(a):
        return a.dtype in _FLOAT and a.rank == rank and a.shape[1].min > 0 and all(d.min > 0 for d in a.shape[2:])

    def params(a):
        c = a.shape[1]
        groups = [g for g in (1, 2, 3) if c.is_literal and c.const % g == 0] or [1]
        # valid by construction: (kernel, dilation) that fit with some padding, then a padding that fits
        kd = [(k, d) for k in (1, 2, 3) for d in (1, 2) if any(_conv_fits(a, _kp(k, d, q), spatial) for q in (0, 1, 2))]

        def draw(draw_):
            k, d = draw_(st.sampled_from(kd))
            pad = draw_(st.sampled_from([q for q in (0, 1, 2) if _conv_fits(a, _kp(k, d, q), spatial)]))
            return {"kernel": k, "stride": draw_(st.sampled_from([1, 2])), "padding": pad, "dilation": d,
                    "groups": draw_(st.sampled_from(groups)), "out": draw_(st.sampled_from([2, 1, 4]))}
        return drawn(draw)

    def check(a, p):
        if not accepts(a):
            return f"{name} takes a floating tensor of rank {rank}"
        c = a.shape[1]
        if p["groups"] != 1 and not (c.is_literal and c.const % p["groups"] == 0):
            return f"{name}: {p['groups']} groups do not divide the channels"
        if not _conv_fits(a, p, spatial):
            return f"{name}: a spatial dim is shorter than the dilated kernel at some call"
        return None

    def infer(a, p, out):
        dims = [d.mapped(f"conv{p['kernel']}{p['stride']}{p['padding']}{p['dilation']}",
                         lambda v: _conv_out(v, p["kernel"], p["stride"], p["padding"], p["dilation"]))
                for d in a.shape[-spatial:]]
        return _fresh(a, out, shape=(a.shape[0], Dim.literal(p["out"] * p["groups"], a.calls), *dims))

    def render(x, p, a):
        cin = dim_text(x, 1) if p["groups"] == 1 else str(a.shape[1].const // p["groups"])
        w = weight([str(p["out"] * p["groups"]), cin] + [str(p["kernel"])] * spatial, x)
        kw = ", ".join(f"{k}={p[k]}" for k in ("stride", "padding", "dilation", "groups"))
        return f"F.{name}({x}, {w}, {kw})"

    # the kernel must fit: a guard on every spatial symbol
    return _spec(name, "nn", accepts, lambda args: params(args[0]), check, infer, render,
                 guards=lambda a, p: {s for d in a.shape[-spatial:] for s in d.syms}, api=f"F.{name}",
                 doc=f"{name} with padding, stride, dilation and groups against a made weight")


_conv("conv1d", 1)
_conv("conv2d", 2)


# ---- normalisation ----------------------------------------------------------------

def _per_channel_count(a) -> list:
    """Values per channel at each call (batch_norm training needs more than 1)."""
    out = []
    for i in range(a.calls):
        n = 1
        for j, d in enumerate(a.shape):
            if j != 1:
                n *= d.values[i]
        out.append(n)
    return out


def _bn_check(a, p):
    if a.dtype not in _FLOAT or a.rank < 2 or a.shape[1].min <= 0:
        return "batch_norm takes a floating tensor of rank >= 2 with channels at every call"
    if p["training"] and min(_per_channel_count(a)) <= 1:
        return "batch_norm training needs more than one value per channel at every call"
    return None


def _bn_render(x, p, a):
    c = dim_text(x, 1)
    stats = (f"torch.zeros({c}, device={x}.device, dtype={x}.dtype), "
             f"torch.ones({c}, device={x}.device, dtype={x}.dtype)")
    affine = f", {weight([c], x)}, {weight([c], x, 1)}" if p["affine"] else ""
    return f"F.batch_norm({x}, {stats}{affine}, training={p['training']})"


_spec("batch_norm", "nn", lambda a: a.dtype in _FLOAT and a.rank >= 2 and a.shape[1].min > 0,
      lambda args: st.fixed_dictionaries({
          "training": st.sampled_from([False] + [True] * (min(_per_channel_count(args[0])) > 1)),
          "affine": st.booleans()}),
      _bn_check, lambda a, p, out: _fresh(a, out), _bn_render, api="F.batch_norm",
      doc="batch_norm over dim 1 with made running stats, training or eval, affine or not")


def _ln_render(x, p, a):
    k = p["dims"]
    shape = f"{x}.shape[-{k}:]"
    if not p["affine"]:
        return f"F.layer_norm({x}, {shape})"
    dims = [dim_text(x, -i) for i in range(k, 0, -1)]
    return f"F.layer_norm({x}, {shape}, {weight(dims, x)}, {weight(dims, x, 1)})"


_spec("layer_norm", "nn", lambda a: a.dtype in _FLOAT and a.rank >= 1,
      lambda args: st.fixed_dictionaries({"dims": st.integers(1, min(2, args[0].rank)), "affine": st.booleans()}),
      lambda a, p: None if a.dtype in _FLOAT and 1 <= p.get("dims", 0) <= min(2, a.rank) else "layer_norm: bad dims",
      lambda a, p, out: _fresh(a, out), _ln_render, api="F.layer_norm",
      doc="layer_norm over the last one or two dims, affine or not")


def _gn_groups(a):
    """Groups that divide a literal channel count and leave more than one value per group at every call
    (eager refuses one: "Expected more than 1 value per channel when training")."""
    c = a.shape[1] if a.rank >= 2 else None
    if c is None or not c.is_literal or c.const == 0:
        return []
    counts = _per_channel_count(a)  # batch times spatial sizes, at each call
    return [g for g in (1, 2, 3, 4) if c.const % g == 0 and all(n * (c.const // g) != 1 for n in counts)]


def _gn_spatial(a) -> bool:
    """Whether the spatial dims hold elements at every call: torch 2.15's eager refuses an empty HxW
    ("Expected HxW to be greater than 0"). Drawn so (a program valid on every release); a stored program of
    an older release that has one still loads, and judged on 2.15 its eager raises too (invalid)."""
    return not any(d.is_bound_only or 0 in d.values for d in a.shape[2:])


_spec("group_norm", "nn", lambda a: a.dtype in _FLOAT and a.rank >= 2 and bool(_gn_groups(a)) and _gn_spatial(a),
      lambda args: st.sampled_from(_gn_groups(args[0])).map(lambda g: {"groups": g}),
      lambda a, p: None if a.dtype in _FLOAT and p.get("groups") in _gn_groups(a) else "group_norm: groups must divide C",
      lambda a, p, out: _fresh(a, out), lambda x, p, a: f"F.group_norm({x}, {p['groups']})", api="F.group_norm",
      doc="group_norm on a literal channel count")


def _softmax(name):
    return _spec(name, "nn", lambda a: a.dtype in _FLOAT and a.rank >= 1,
                 lambda args: with_dtype(st.integers(-args[0].rank, -1).map(lambda d: {"dim": d}), args[0], True),
                 lambda a, p: (None if a.dtype in _FLOAT and _dim_in(a, p.get("dim")) else f"{name}: dim out of range")
                 or dtype_check(a, p, True),
                 lambda a, p, out: _fresh(a, out, dtype=p.get("dtype") or a.dtype),
                 lambda x, p, a: f"F.{name}({x}, dim={p['dim']}{dtype_kw(p)})", api=f"F.{name}",
                 doc=f"{name} over any dim (a dynamic one too), dtype= (a wider one) or not")


_softmax("softmax")
_softmax("log_softmax")


# ---- embedding and dropout -----------------------------------------------------------

_INT = frozenset(D.INTEGRAL)


def _counts(p, rows, dim) -> bool:
    """rows a count >= 1 (indices are taken modulo it), dim >= 0."""
    r, d = p.get(rows), p.get(dim)
    return (isinstance(r, int) and not isinstance(r, bool) and r >= 1
            and isinstance(d, int) and not isinstance(d, bool) and d >= 0)

_spec("embedding", "nn", lambda a: a.dtype in _INT and a.rank <= 3,
      lambda args: st.fixed_dictionaries({"rows": st.sampled_from([5, 3, 16]), "dim": st.sampled_from([4, 1, 3])}),
      lambda a, p: (None if a.dtype in _INT and a.rank <= 3 and _counts(p, "rows", "dim") else
                    "embedding takes an integer index tensor, and int rows >= 1 and dim >= 0"),
      lambda a, p, out: _fresh(a, out, shape=tuple(a.shape) + (Dim.literal(p["dim"], a.calls),), dtype="float32"),
      lambda x, p, a: (f"F.embedding({x}.long().abs() % {p['rows']}, "
                       f"torch.arange({p['rows'] * p['dim']}, device={x}.device).reshape({p['rows']}, {p['dim']})"
                       f".float().mul(0.37).sin())"),
      api="F.embedding", doc="an integer value as indices into a made table (taken modulo its rows)")

_spec("dropout0", "nn", lambda a: a.dtype in _FLOAT,
      lambda args: st.booleans().map(lambda t: {"training": t}),
      lambda a, p: None if a.dtype in _FLOAT else "dropout takes a floating tensor",
      # eager returns its input itself: the result shares the input's storage (a backward case
      # may not write it in place; AOTAutograd's clone instead is pytorch#115249)
      lambda a, p, out: _view(a, a.shape), lambda x, p, a: f"F.dropout({x}, p=0.0, training={p['training']})",
      api="F.dropout", label_fn=lambda p: "F.dropout(p=0)", doc="dropout with p=0: the identity (eager returns its input), through the random-op path")
