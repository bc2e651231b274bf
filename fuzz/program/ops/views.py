"""Views: slicing, narrow, transpose/permute, (un)squeeze, expand, flatten/reshape, as_strided."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from fuzz.program.opspec import (OpSpec, calls, check_width, index_expr, product_dim, render_width,
                                 slice_len, slice_text, width_syms, width_values, widths)
from fuzz.program.ops.common import drawn, MAX_RANK, OPS
from fuzz.program.ops.common_gen import shape_text
from fuzz.program.ops.common import (_SLICE_BOUNDS,
                                     _dim_in, _view)
from fuzz.program.symbolic import Dim, norm_dim

# ---- views -------------------------------------------------------------------

def view_op(name, accepts, params, check, shape_fn, render, overlapping=None, guards=None, inputs_only=False, doc="",
            api=None, label_fn=None):
    return OPS.add(OpSpec(
        name=name, family="view", arity=1, accepts=accepts,
        params=lambda args: params(args[0]), check=lambda args, p: check(args[0], p),
        infer=lambda args, p, out: _view(args[0], shape_fn(args[0], p),
                                         overlapping=(overlapping(args[0], p) if overlapping else args[0].overlapping)),
        render=lambda n, p, i: render(n[0], p, i[0]),
        guards=(lambda args, p: guards(args[0], p)) if guards else (lambda args, p: set()),
        inputs_only=inputs_only, doc=doc, api=f"Tensor.{name}" if api is None else api, label_fn=label_fn,
    ))



def _slice_params(a):
    return st.fixed_dictionaries({
        "dim": st.integers(-a.rank, -1),
        "start": st.sampled_from(_SLICE_BOUNDS),
        "stop": st.sampled_from(_SLICE_BOUNDS),
        "step": st.sampled_from([1, 2, 3]),
    })


def _slice_check(a, p):
    if not _dim_in(a, p.get("dim")) or p["dim"] >= 0:
        return f"slice dim {p.get('dim')!r} must be negative and in range for rank {a.rank}"
    if not isinstance(p.get("step"), int) or p["step"] < 1:
        return "slice step must be a positive int"
    return None


def _slice_shape(a, p):
    d = norm_dim(p["dim"], a.rank)
    shape = list(a.shape)
    start, stop, step = p["start"], p["stop"], p["step"]
    shape[d] = a.shape[d].mapped(f"[{slice_text(start, stop, step)}]", lambda v: slice_len(v, start, stop, step))
    if start is None and stop is None and step == 1:
        shape[d] = a.shape[d]
    return shape


view_op("slice", lambda a: a.rank >= 1, _slice_params, _slice_check, _slice_shape,
        lambda x, p, a: f"{x}[{index_expr(p['dim'], slice_text(p['start'], p['stop'], p['step']))}]", api="Tensor.__getitem__",
        label_fn=lambda p: "slicing x[a:b]",
        doc="basic slicing with steps; bounds clamp, so any size is valid")


def _narrow_params(a):
    def draw(draw_):
        d = draw_(st.integers(-a.rank, -1))
        dim = a.shape[d]
        start = draw_(st.integers(0, min(dim.min, 3)))
        lo = (0,) * len(dim.values)
        hi = tuple(v - start for v in dim.values)
        return {"dim": d, "start": start, "length": draw_(widths(a, lo, hi))}
    return drawn(draw)


def _narrow_check(a, p):
    if not _dim_in(a, p.get("dim")):
        return f"narrow dim {p.get('dim')!r} out of range for rank {a.rank}"
    if (r := check_width(p.get("length"), a)):
        return r
    vals = a.shape[p["dim"]].values
    lens = width_values(p["length"], a)
    if any(not (0 <= p["start"] and 0 <= n and p["start"] + n <= v) for v, n in zip(vals, lens)):
        return "narrow range leaves the dim at some call"
    return None


def _narrow_shape(a, p):
    shape = list(a.shape)
    w = p["length"]
    if isinstance(w, int):
        shape[p["dim"]] = Dim.literal(w, calls(a))
    else:
        shape[p["dim"]] = a.shape[w["dim"]].mapped(f"//{w['div']}", lambda v, k=w["div"]: v // k).plus(w["add"])
    return shape


view_op("narrow", lambda a: a.rank >= 1, _narrow_params, _narrow_check, _narrow_shape,
        lambda x, p, a: f"{x}.narrow({p['dim']}, {p['start']}, {render_width(p['length'], x)})",
        guards=lambda a, p: set(a.shape[p["dim"]].syms) | width_syms(p["length"], a),
        doc="narrow with a literal or size-relative length")


def _transpose_shape(a, p):
    s = list(a.shape)
    i, j = p["dims"]
    s[i], s[j] = s[j], s[i]
    return s


view_op("transpose", lambda a: a.rank >= 2,
        lambda a: st.sampled_from([(i, j) for i in range(a.rank) for j in range(i + 1, a.rank)][::-1]).map(
            lambda t: {"dims": list(t)}),
        lambda a, p: None if (isinstance(p.get("dims"), list) and len(p["dims"]) == 2
                              and all(_dim_in(a, d) for d in p["dims"])) else "transpose needs two dims in range",
        _transpose_shape, lambda x, p, a: f"{x}.transpose({p['dims'][0]}, {p['dims'][1]})")

view_op("permute", lambda a: a.rank >= 2,
        lambda a: st.permutations(list(range(a.rank))).map(lambda perm: {"perm": perm}),
        lambda a, p: None if sorted(p.get("perm", [])) == list(range(a.rank)) else "permute needs a permutation of all dims",
        lambda a, p: [a.shape[i] for i in p["perm"]],
        lambda x, p, a: f"{x}.permute({', '.join(map(str, p['perm']))})")

view_op("unsqueeze", lambda a: a.rank < MAX_RANK,
        lambda a: st.integers(0, a.rank).map(lambda d: {"dim": d}),
        lambda a, p: None if isinstance(p.get("dim"), int) and 0 <= p["dim"] <= a.rank else "unsqueeze dim out of range",
        lambda a, p: list(a.shape[:p["dim"]]) + [Dim.literal(1, calls(a))] + list(a.shape[p["dim"]:]),
        lambda x, p, a: f"{x}.unsqueeze({p['dim']})")


def _ones(a):
    return [i for i, d in enumerate(a.shape) if d.key == "1"]


view_op("squeeze", lambda a: bool(_ones(a)),
        lambda a: st.sampled_from(_ones(a)).map(lambda d: {"dim": d}),
        lambda a, p: None if p.get("dim") in _ones(a) else "squeeze needs a dim that is always 1",
        lambda a, p: [d for i, d in enumerate(a.shape) if i != p["dim"]],
        lambda x, p, a: f"{x}.squeeze({p['dim']})")


def _expand_shape(a, p):
    s = list(a.shape)
    s[p["dim"]] = Dim.literal(p["size"], calls(a))
    return s


view_op("expand", lambda a: bool(_ones(a)),
        lambda a: st.fixed_dictionaries({"dim": st.sampled_from(_ones(a)), "size": st.integers(2, 4)}),
        lambda a, p: None if p.get("dim") in _ones(a) and isinstance(p.get("size"), int) and p["size"] >= 1
        else "expand needs a dim that is always 1 and a positive size",
        _expand_shape,
        lambda x, p, a: f"{x}.expand({', '.join(str(p['size']) if i == p['dim'] else '-1' for i in range(a.rank))})",
        overlapping=lambda a, p: True,
        doc="expand a size-1 dim (the result overlaps itself: no in-place writes)")


def _flatten_shape(a, p):
    s, e = p["start"], p["end"]
    return list(a.shape[:s]) + [product_dim(list(a.shape[s:e + 1]), calls(a))] + list(a.shape[e + 1:])


view_op("flatten", lambda a: a.rank >= 2,
        lambda a: st.integers(0, a.rank - 2).flatmap(
            lambda s: st.integers(s + 1, a.rank - 1).map(lambda e: {"start": s, "end": e})),
        lambda a, p: None if isinstance(p.get("start"), int) and isinstance(p.get("end"), int)
        and 0 <= p["start"] < p["end"] < a.rank else "flatten needs 0 <= start < end < rank",
        _flatten_shape,
        lambda x, p, a: f"{x}.flatten({p['start']}, {p['end']})",
        overlapping=lambda a, p: a.overlapping,
        doc="flatten (a view, or a copy for non-contiguous inputs)")

view_op("reshape", lambda a: a.rank >= 1,
        lambda a: st.integers(0, a.rank - 1).map(lambda k: {"keep": k}),
        lambda a, p: None if isinstance(p.get("keep"), int) and 0 <= p["keep"] < a.rank else "reshape keep out of range",
        lambda a, p: list(a.shape[:p["keep"]]) + [product_dim(list(a.shape[p["keep"]:]), calls(a))],
        lambda x, p, a: f"{x}.reshape(" + ", ".join(
            [f"{x}.shape[{i}]" for i in range(p["keep"])]
            + [" * ".join(f"{x}.shape[{i}]" for i in range(p["keep"], a.rank))]) + ")",
        doc="reshape keeping the leading dims and merging the rest (sizes spelled out: -1 is ambiguous at numel 0)")


# A literal shape, as users write it: reshape(-1, k) or view(-1, k). k divides the element count at
# every call, and the count is never 0 (-1 is ambiguous there). A dynamic count makes the compiler guard k | numel.
# Also of a data-dependent count (the compiler cannot know it): (-1, 1) of any count, 0 and sizes known
# only from below included (no k to divide, no guard: its symbols may be marked unbacked), (-1, k) of one the
# program fixes (mask_keep), and reshape(1) where the count is 1 at every call.
_LITERAL_LAST = (2, 3, 4, 8)


def _numel(a):
    return product_dim(list(a.shape), calls(a))


def _literal_lasts(a) -> list:
    n = _numel(a)
    if n.is_bound_only or n.min < 1:
        return []
    return [k for k in _LITERAL_LAST if all(v % k == 0 for v in n.values)]


def _reshape_lit_options(a) -> list:
    """The params reshape_lit may take for `a`: (-1, k) for k dividing the count, (-1, 1), and (1,) where the
    count is 1 at every call."""
    out = [{"k": k, "via": v} for k in _literal_lasts(a) for v in ("reshape", "view")]
    out += [{"k": 1, "via": v} for v in ("reshape", "view")]
    if set(_numel(a).values) == {1} and not _numel(a).is_bound_only:
        out.append({"k": 1, "via": "reshape", "one": True})
    return out


def _reshape_lit_check(a, p):
    if type(p.get("k")) is not int or dict(p) not in _reshape_lit_options(a):
        return (f"reshape_lit needs via reshape or view and a last size among {_literal_lasts(a) + [1]} dividing "
                "numel, or one: true (reshape(1)) where numel is 1 at every call")
    return None


def _reshape_lit_shape(a, p):
    n = _numel(a)
    if p.get("one"):
        return [Dim.literal(1, calls(a))]
    if p["k"] == 1:
        return [n, Dim.literal(1, calls(a))]
    return [n.mapped(f"//{p['k']}", lambda v, k=p["k"]: v // k), Dim.literal(p["k"], calls(a))]


def _reshape_lit_render(x, p, a):
    shape = "1" if p.get("one") else f"-1, {p['k']}"
    return f"{x}.reshape({shape})" if p["via"] == "reshape" else f"{x}.contiguous().view({shape})"


view_op("reshape_lit", lambda a: a.rank >= 1,
        lambda a: st.sampled_from(_reshape_lit_options(a)),
        _reshape_lit_check, _reshape_lit_shape, _reshape_lit_render,
        api="Tensor.reshape", guards=lambda a, p: set(_numel(a).syms) if p["k"] >= 2 else set(),
        doc="reshape or view to a literal shape (-1, k): k divides the element count at every call; (-1, 1) of "
            "any count, data-dependent too; (1,) of a count that is 1 at every call")


def _squeezable(a) -> list:
    """Dims that are sizes (not a literal 1) and are 1 at every call or at none: squeeze drops the first kind and
    keeps the second, so the rank is the same at every call. A size known only from below could be either; one
    the program fixes (mask_keep) is known here though the compiler cannot know it."""
    return [i for i, d in enumerate(a.shape) if not d.is_literal and not d.is_bound_only
            and len({v == 1 for v in d.values}) == 1]


# No guard: the compiler decides a squeeze of a size without one (whether it is 1 is not known while it traces
# a dim marked unbacked or a data-dependent one), so its symbols may be marked unbacked.
view_op("squeeze_dynamic", lambda a: bool(_squeezable(a)),
        lambda a: st.sampled_from(_squeezable(a)).map(lambda d: {"dim": d}),
        lambda a, p: None if p.get("dim") in _squeezable(a) else "squeeze_dynamic needs a size dim, 1 at all calls or none",
        lambda a, p: [d for i, d in enumerate(a.shape) if i != p["dim"] or d.values[0] != 1],
        lambda x, p, a: f"{x}.squeeze({p['dim']})", api="Tensor.squeeze",
        doc="squeeze a dim that is a size: 1 at run time (dropped) or never 1 (kept: a no-op the compiler must "
            "prove); of a data-dependent size or one marked unbacked too")


def _as_strided_shape(a, p):
    out = []
    for i in p["perm"]:
        d = a.shape[i]
        out.append(d.mapped("//2", lambda v: v // 2) if i == p.get("halve") else d)
    return out


def _as_strided_render(x, p, a):
    sizes = ", ".join(f"{x}.shape[{i}]" + (" // 2" if i == p.get("halve") else "") for i in p["perm"])
    strides = ", ".join(f"{x}.stride({i})" for i in p["perm"])
    return f"{x}.as_strided(({sizes},), ({strides},), {x}.storage_offset())"


view_op("as_strided", lambda a: a.rank >= 1,
        lambda a: st.fixed_dictionaries({
            "perm": st.permutations(list(range(a.rank))),
            "halve": st.none() | st.integers(0, a.rank - 1)}),
        lambda a, p: None if sorted(p.get("perm", [])) == list(range(a.rank))
        and (p.get("halve") is None or 0 <= p["halve"] < a.rank) else "as_strided needs a permutation and a dim to halve",
        _as_strided_shape, _as_strided_render, inputs_only=True,
        doc="as_strided on a program input: its own sizes/strides permuted, one size maybe halved")


# as_strided on computed values too, of a contiguous copy of it (a clone: contiguous() of a slice would keep its
# storage and offset, and as_strided's offset is counted from the storage's start), whose layout the generator
# knows: numel elements from offset 0. Free sizes, strides and offset. "window": sizes from the element count
# (dynamic where it is), every k-th element in rows of m; "literal": literal sizes and strides (0 among them:
# overlapping) inside the smallest storage of the schedule; "oob": past the storage on purpose, eager raises at
# every call (pytorch#195665: Inductor does not).
_RESTRIDE_WAYS = ("window", "literal") * 7 + ("window", "oob")  # one draw in 16 past the storage
_RESTRIDE_OFFSETS = (0, 1, 2, 3)
_RESTRIDE_SIZES = (2, 1, 3, 4)
_RESTRIDE_STRIDES = (1, 2, 0, 3, 4)


def _restride_ok(a) -> bool:
    """Values with known sizes and at least one element at every call."""
    return not any(d.is_bound_only for d in a.shape) and _numel(a).min >= 1


def _extent(sizes, strides, offset) -> int:
    """The last storage element the view addresses, plus one (0 for an empty view)."""
    if 0 in sizes:
        return 0
    return offset + sum((s - 1) * t for s, t in zip(sizes, strides)) + 1


def _restride_params(a):
    room = _numel(a).min  # elements of the smallest storage over the schedule

    def draw(d):
        way = d(st.sampled_from(_RESTRIDE_WAYS))
        offset = d(st.sampled_from([o for o in _RESTRIDE_OFFSETS if o < room] if way != "oob" else
                                   [o for o in _RESTRIDE_OFFSETS if o >= 1]))
        if way == "window":
            return {"way": way, "offset": offset, "k": d(st.sampled_from((1, 2, 3))),
                    "m": d(st.sampled_from((None, 2, 3)))}
        if way == "oob":
            return {"way": way, "offset": offset}
        rank = d(st.sampled_from((1, 2, 3)))
        sizes = [d(st.sampled_from(_RESTRIDE_SIZES)) for _ in range(rank)]
        strides = [d(st.sampled_from(_RESTRIDE_STRIDES)) for _ in range(rank)]
        while _extent(sizes, strides, offset) > room:  # inside every call's storage: drop the largest reach
            i = max(range(rank), key=lambda j: (sizes[j] - 1) * strides[j])
            sizes[i] = 1
        return {"way": way, "offset": offset, "sizes": sizes, "strides": strides}
    return drawn(draw)


def _small_ints(xs, top, n=(1, 3)) -> bool:
    return isinstance(xs, list) and n[0] <= len(xs) <= n[1] and all(
        isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= top for x in xs)


def _restride_check(a, p):
    way, offset = p.get("way"), p.get("offset")
    if way not in ("window", "literal", "oob") or type(offset) is not int or offset not in _RESTRIDE_OFFSETS:
        return "as_strided_free needs way window, literal or oob and an offset of 0..3"
    room = _numel(a).min
    if way == "oob":
        return None if offset >= 1 else "an oob as_strided_free needs an offset >= 1"
    if offset >= room:
        return f"as_strided_free offset {offset} is past a storage of {room} element(s)"
    if way == "window":
        k, m = p.get("k"), p.get("m")
        ok = type(k) is int and k in (1, 2, 3) and (m is None or type(m) is int and m in (2, 3))
        return None if ok else "a window needs k 1..3, m None/2/3"
    sizes, strides = p.get("sizes"), p.get("strides")
    if not (_small_ints(sizes, 4) and _small_ints(strides, 4) and len(sizes) == len(strides)):
        return "a literal as_strided_free needs 1-3 sizes and as many strides, each 0..4"
    if _extent(sizes, strides, offset) > room:
        return f"as_strided_free reaches past a storage of {room} element(s)"
    return None


def _restride_shape(a, p):
    n, o = _numel(a), p["offset"]
    if p["way"] == "oob":
        return [n]
    if p["way"] == "literal":
        return [Dim.literal(s, calls(a)) for s in p["sizes"]]
    k, m = p["k"], p["m"]
    step = k * (m or 1)
    rows = n.mapped(f"-{o}//{step}", lambda v: (v - o) // step) if o or step > 1 else n
    return [rows] if m is None else [rows, Dim.literal(m, calls(a))]


def _restride_overlapping(a, p) -> bool:
    if p["way"] != "literal":
        return False  # a window's rows are k*m apart, its elements k; oob raises
    seen = set()
    for idx in itertools.product(*(range(s) for s in p["sizes"])):
        at = sum(i * t for i, t in zip(idx, p["strides"]))
        if at in seen:
            return True
        seen.add(at)
    return False


def _restride_render(x, p, a):
    o, base = p["offset"], f"{x}.clone(memory_format=torch.contiguous_format)"
    if p["way"] == "oob":
        return f"{base}.as_strided(({x}.numel(),), (1,), {o})"
    if p["way"] == "literal":
        return f"{base}.as_strided({_tuple(p['sizes'])}, {_tuple(p['strides'])}, {o})"
    k, m = p["k"], p["m"]
    step = k * (m or 1)
    rows = f"{x}.numel()" if not o else f"({x}.numel() - {o})"
    rows = rows if step == 1 else f"{rows} // {step}"
    sizes, strides = ((rows,), (k,)) if m is None else ((rows, m), (step, k))
    return f"{base}.as_strided({_tuple(sizes)}, {_tuple(strides)}, {o})"


def _tuple(items) -> str:
    return shape_text([str(i) for i in items])


view_op("as_strided_free", _restride_ok, _restride_params, _restride_check, _restride_shape, _restride_render,
        overlapping=lambda a, p: a.overlapping or _restride_overlapping(a, p), api="Tensor.as_strided",
        doc="as_strided on a contiguous clone of any value: free sizes, strides and offset inside its storage at "
            "every call, or past it on purpose (eager raises)")
