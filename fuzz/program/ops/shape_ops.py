"""Ops that rearrange or make tensors from sizes: split/chunk/unbind (one
piece taken), stack, repeat, tile, flip, roll, repeat_interleave, unfold,
contiguous, clone, view(dtype), new_zeros/new_full/full/arange with symbolic
sizes; and in place: zero_, fill_, index_copy_."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.opspec import OpSpec, py_literal
from fuzz.program.ops.common import drawn, OPS, _all_syms, _dim_in, _fresh, _view
from fuzz.program.ops.common_gen import dim_text, index
from fuzz.program.symbolic import Dim, broadcast_shape, norm_dim, strides_overlap


def _one(name, accepts, params, check, infer, render, api, doc, family="shape", guards=None, mutates=False):
    return OPS.add(OpSpec(
        name=name, family="inplace" if mutates else family, arity=1, mutates=mutates,
        accepts=accepts, params=lambda args: params(args[0]),
        check=lambda args, p: ("in-place write into a self-overlapping tensor" if mutates and args[0].overlapping
                               else None) or check(args[0], p),
        infer=(lambda args, p, out: args[0]) if mutates else (lambda args, p, out: infer(args[0], p, out)),
        render=lambda n, p, i: render(n[0], p, i[0]),
        guards=(lambda args, p: guards(args[0], p)) if guards else (lambda args, p: set()), api=api, doc=doc))


def _neg_dim(a):
    return st.integers(-a.rank, -1)


def _dim_ok(a, p):
    return None if _dim_in(a, p.get("dim")) else f"dim {p.get('dim')!r} out of range for rank {a.rank}"


def _replace(a, d, dim):
    d = norm_dim(d, a.rank)
    return tuple(dim if i == d else s for i, s in enumerate(a.shape))


# ---- split, chunk, unbind: one piece ---------------------------------------------------

def _nonempty_dims(a):
    return [d for d in range(-a.rank, 0) if a.shape[d].min >= 1]


def _split_params(a):
    def draw(draw_):
        d = draw_(st.sampled_from(_nonempty_dims(a)))
        size = draw_(st.sampled_from([1, 2, 3]))
        pieces = min(-(-v // size) for v in a.shape[d].values)  # pieces that exist at every call (>= 1)
        take = draw_(st.integers(0, pieces - 1))
        return {"dim": d, "size": size, "take": take}
    return drawn(draw)


def _split_len(v, size, take):
    return max(min(size, v - size * take), 0)


def _split_check(a, p):
    if (r := _dim_ok(a, p)):
        return r
    if p.get("take") is None or any(p["take"] * p["size"] >= v for v in a.shape[p["dim"]].values):
        return "split: the taken piece does not exist at some call"
    return None


_one("split", lambda a: a.rank >= 1 and any(d.min >= 1 for d in a.shape),
     _split_params,
     _split_check,
     lambda a, p, out: _view(a, _replace(a, p["dim"], a.shape[p["dim"]].mapped(
         f"split{p['size']}.{p['take']}", lambda v: _split_len(v, p["size"], p["take"])))),
     lambda x, p, a: f"torch.split({x}, {p['size']}, dim={p['dim']})[{p['take']}]", "torch.split",
     "a piece of split(size): the last piece may be short")


def _chunk_check(a, p):
    if (r := _dim_ok(a, p)):
        return r
    if p.get("take") != 0 or not isinstance(p.get("chunks"), int) or p["chunks"] < 1:
        return "chunk: take the first of a positive number of chunks"
    if a.shape[p["dim"]].min < 1:
        return "chunk of a dim that is empty at some call"
    return None


_one("chunk", lambda a: a.rank >= 1 and any(d.min >= 1 for d in a.shape),
     lambda a: st.fixed_dictionaries({"dim": st.sampled_from([d for d in range(-a.rank, 0) if a.shape[d].min >= 1]),
                                      "chunks": st.sampled_from([2, 3]), "take": st.just(0)}),
     _chunk_check,
     lambda a, p, out: _view(a, _replace(a, p["dim"], a.shape[p["dim"]].mapped(
         f"chunk{p['chunks']}", lambda v: min(v, -(-v // p["chunks"]))))),
     lambda x, p, a: f"torch.chunk({x}, {p['chunks']}, dim={p['dim']})[0]", "torch.chunk",
     "the first piece of chunk(n): its size is ceil(size / n)")


def _unbind_dims(a):
    return [d for d in range(-a.rank, 0) if a.shape[d].min >= 1]


_one("unbind", lambda a: a.rank >= 1 and bool(_unbind_dims(a)),
     lambda a: st.sampled_from(_unbind_dims(a)).map(lambda d: {"dim": d}),
     lambda a, p: _dim_ok(a, p) or (None if a.shape[p["dim"]].min >= 1 else "unbind: the dim is empty at some call"),
     lambda a, p, out: _view(a, [s for i, s in enumerate(a.shape) if i != norm_dim(p["dim"], a.rank)]),
     lambda x, p, a: f"torch.unbind({x}, dim={p['dim']})[-1]", "torch.unbind", "the last piece of unbind")


# ---- stack: two tensors of one shape ------------------------------------------------------

def _same_shape(a, b):
    return a.rank == b.rank and all(x.key == y.key for x, y in zip(a.shape, b.shape))


OPS.add(OpSpec(
    name="stack", family="shape", arity=2, accepts=lambda a: a.rank <= 4, pair=_same_shape,
    params=lambda args: st.integers(-args[0].rank - 1, -1).map(lambda d: {"dim": d}),
    check=lambda args, p: None if _same_shape(*args) and -args[0].rank - 1 <= p.get("dim", 0) < 0
    else "stack takes two tensors of the same shape and a dim in range",
    infer=lambda args, p, out: _fresh(args[0], out, dtype=D.promote(args[0].dtype, args[1].dtype), shape=(
        lambda s, d: s[:d] + (Dim.literal(2, args[0].calls),) + s[d:])(
        tuple(broadcast_shape(args[0].shape, args[1].shape)), p["dim"] + args[0].rank + 1)),
    render=lambda n, p, i: f"torch.stack([{n[0]}, {n[1]}], dim={p['dim']})",
    guards=lambda args, p: _all_syms(*args), operand=lambda chosen: chosen[0].shape, api="torch.stack", doc="stack two tensors of one shape"))


# ---- repeat, tile, flip, roll, repeat_interleave, unfold -----------------------------------

def _times(a):
    return st.lists(st.sampled_from([1, 2, 3]), min_size=a.rank, max_size=a.rank)


def _mul_dim(d, k):
    return d if k == 1 else d.mapped(f"*{k}", lambda v: v * k)


_one("repeat", lambda a: 1 <= a.rank <= 4, lambda a: _times(a).map(lambda r: {"reps": r}),
     lambda a, p: None if isinstance(p.get("reps"), list) and len(p["reps"]) == a.rank else "repeat: one rep per dim",
     lambda a, p, out: _fresh(a, out, shape=tuple(_mul_dim(d, k) for d, k in zip(a.shape, p["reps"]))),
     lambda x, p, a: f"{x}.repeat({', '.join(map(str, p['reps']))})", "Tensor.repeat", "repeat each dim 1-3 times")
_one("tile", lambda a: 1 <= a.rank <= 4, lambda a: _times(a).map(lambda r: {"reps": r}),
     lambda a, p: None if isinstance(p.get("reps"), list) and len(p["reps"]) == a.rank else "tile: one rep per dim",
     lambda a, p, out: _fresh(a, out, shape=tuple(_mul_dim(d, k) for d, k in zip(a.shape, p["reps"]))),
     lambda x, p, a: f"torch.tile({x}, ({', '.join(map(str, p['reps']))},))", "torch.tile", "tile each dim 1-3 times")
_one("flip", lambda a: a.rank >= 1,
     lambda a: st.lists(_neg_dim(a), min_size=1, max_size=a.rank, unique=True).map(lambda ds: {"dims": sorted(ds)}),
     lambda a, p: None if p.get("dims") and all(_dim_in(a, d) for d in p["dims"]) else "flip: dims out of range",
     lambda a, p, out: _fresh(a, out),
     lambda x, p, a: f"torch.flip({x}, ({', '.join(map(str, p['dims']))},))", "torch.flip", "flip one or more dims")
_one("roll", lambda a: a.rank >= 1,
     lambda a: st.fixed_dictionaries({"dim": _neg_dim(a), "shift": st.sampled_from([1, -1, 2, 5])}),
     _dim_ok, lambda a, p, out: _fresh(a, out),
     lambda x, p, a: f"torch.roll({x}, {p['shift']}, dims={p['dim']})", "torch.roll",
     "roll along a dim, shifts past its size too")
_one("repeat_interleave", lambda a: 1 <= a.rank <= 4,
     lambda a: st.fixed_dictionaries({"dim": _neg_dim(a), "repeats": st.sampled_from([2, 1, 3])}),
     _dim_ok,
     lambda a, p, out: _fresh(a, out, shape=_replace(a, p["dim"], _mul_dim(a.shape[p["dim"]], p["repeats"]))),
     lambda x, p, a: f"torch.repeat_interleave({x}, {p['repeats']}, dim={p['dim']})", "torch.repeat_interleave",
     "repeat_interleave by a literal count")


def _unfold_params(a):
    dims = [d for d in range(-a.rank, 0) if a.shape[d].min >= 1]

    def draw(draw_):
        d = draw_(st.sampled_from(dims))
        size = draw_(st.integers(1, min(a.shape[d].min, 3)))
        # a step of the window's size or more: gapped windows, no element twice, so writable in place
        return {"dim": d, "size": size, "step": draw_(st.sampled_from([1, 2, size, size + 1]))}
    return drawn(draw)


def _unfold_overlaps(a, p) -> bool:
    """The unfolded dim becomes (windows, size) with strides (step, 1) in its own elements: on a base that does
    not overlap itself, the view overlaps only where those two dims do at some call."""
    return a.overlapping or any(strides_overlap(((v - p["size"]) // p["step"] + 1, p["size"]), (p["step"], 1))
                                for v in a.shape[p["dim"]].values)


_one("unfold", lambda a: 1 <= a.rank <= 4 and any(d.min >= 1 for d in a.shape), _unfold_params,
     lambda a, p: _dim_ok(a, p) or (None if 1 <= p.get("size", 0) <= a.shape[p["dim"]].min
                                    else "unfold: the window is longer than the dim at some call")
     or (None if type(p.get("step")) is int and 1 <= p["step"] <= 8 else "unfold: step must be an int in 1..8"),
     lambda a, p, out: _view(a, _replace(a, p["dim"], a.shape[p["dim"]].mapped(
         f"unfold{p['size']}.{p['step']}", lambda v: (v - p["size"]) // p["step"] + 1))
         + (Dim.literal(p["size"], a.calls),), overlapping=_unfold_overlaps(a, p)),
     lambda x, p, a: f"{x}.unfold({p['dim']}, {p['size']}, {p['step']})", "Tensor.unfold",
     "sliding windows: a view whose windows overlap (step < size) or leave gaps (step >= size: writable)",
     guards=lambda a, p: set(a.shape[p["dim"]].syms))


# ---- copies and reinterpretation ---------------------------------------------------------

_one("contiguous", lambda a: a.rank >= 1, lambda a: st.just({}), lambda a, p: None,
     lambda a, p, out: _fresh(a, out), lambda x, p, a: f"{x}.contiguous()", "Tensor.contiguous",
     "a dense copy of a strided value (or the value itself)")
_one("clone", lambda a: True,
     lambda a: st.sampled_from(["preserve", "contiguous"]).map(lambda m: {"memory_format": m}),
     lambda a, p: None if p.get("memory_format") in ("preserve", "contiguous") else "clone: bad memory_format",
     lambda a, p, out: _fresh(a, out),
     lambda x, p, a: f"{x}.clone(memory_format=torch.{p['memory_format']}_format)", "Tensor.clone",
     "clone preserving the strides or making it contiguous")

_SAME_SIZE = {dt: [o for o in D.ALL if o != dt and o != "bool" and D.ITEMSIZE[o] == D.ITEMSIZE[dt]] for dt in D.ALL}
_INTS = [o for o in D.ALL if o in D.INTEGRAL]


def _ratio(a, to: str) -> float:
    return D.ITEMSIZE[a.dtype] / D.ITEMSIZE[to]


def _view_dtype_targets(a) -> list:
    """The params view_dtype may take for `a`, simplest first: an integer read as another integer of the same
    size, then of a smaller size (its last dim grows), then of a larger one (the last dim shrinks: it must
    divide at every call); a float read as an integer of its size or smaller, and back.
    Float sources go back at once: the bits of a float result (-0.0, NaN payloads, its last bit's rounding) are
    not specified, so reading them as integers would flag correct compilers. They stay integers only where they
    are a program input's own data, read through views (bits_fixed): random normal values, finite and never
    -0.0, the same in eager and compiled."""
    if a.dtype in D.INTEGRAL:
        out = [{"to": t} for t in _SAME_SIZE[a.dtype]]
        if a.rank >= 1:
            last = a.shape[-1]
            out += [{"to": t} for t in _INTS if _ratio(a, t) > 1]
            # never empty: a copy's empty last dim leaves the next stride at 1, which no larger element divides
            out += [{"to": t} for t in _INTS if _ratio(a, t) < 1 and not last.is_data_dependent and last.min >= 1
                    and all(v % round(1 / _ratio(a, t)) == 0 for v in last.values)]
        return out
    if a.dtype in D.FLOATING and a.rank >= 1:
        out = [{"to": t, "back": True} for t in _INTS if _ratio(a, t) >= 1]
        # kept as an integer (not only read back) where the bits are an input's own data (bits_fixed): three
        # draws of four there, since few float values are an input's own
        return out + ([{"to": t} for t in _INTS if _ratio(a, t) >= 1] * 3 if a.bits_fixed else [])
    return []


def _view_dtype_check(a, p):
    if p not in _view_dtype_targets(a):
        return (f"view(dtype) of {a.dtype} rank {a.rank} cannot take {p}: an integer of the same size, or (rank >= 1) "
                "a smaller one, or a larger one dividing the last dim; floats go to an integer and back")
    return None


def _view_dtype_infer(a, p, out):
    if p.get("back"):
        return _view(a, a.shape)
    r = _ratio(a, p["to"])
    shape = list(a.shape)
    if r > 1:
        shape[-1] = a.shape[-1].mapped(f"*{int(r)}", lambda v: v * int(r))
    elif r < 1:
        k = round(1 / r)
        shape[-1] = a.shape[-1].mapped(f"//{k}", lambda v: v // k)
    return _view(a, shape).with_(dtype=p["to"])


def _view_dtype_render(x, p, a):
    r = _ratio(a, p["to"])
    # A size-changing view needs a last stride of 1. contiguous() promises it only where the last dim is never 1
    # and nothing is empty (those count as contiguous whatever their strides); a larger element also needs an
    # aligned storage offset. A fresh contiguous copy promises all of it.
    # A float goes back to its own dtype, read at run time: the float64 reference run of a program holds
    # float64 where the program has float32, and viewing its bits as the program's dtypes would make it garbage
    # (which excuses real mismatches). There the integer view is smaller, so it is prepared as one.
    # A float kept as an integer is first cast to its program dtype, a no-op but in the float64 reference run,
    # whose input (the program's, widened exactly) it narrows back: the reference then reads eager's bits.
    dense = a.shape[-1].min >= 2 and all(d.min >= 1 for d in a.shape) if a.rank else False
    if a.dtype in D.FLOATING and not p.get("back"):
        x = f"{x}.to(torch.{a.dtype})"
    src = (x if r == 1 and not p.get("back") else f"{x}.contiguous()" if r >= 1 and dense
           else f"{x}.clone(memory_format=torch.contiguous_format)")
    out = f"{src}.view(torch.{p['to']})"
    return f"{out}.view({x}.dtype)" if p.get("back") else out


_one("view_dtype", lambda a: bool(_view_dtype_targets(a)),
     lambda a: st.sampled_from(_view_dtype_targets(a)), _view_dtype_check, _view_dtype_infer, _view_dtype_render,
     "Tensor.view(dtype)",
     "reinterpret a value's bits as another dtype: an integer as an integer of any size, a float as an integer "
     "and back, or kept an integer where its bits are an input's own",
     guards=lambda a, p: set(a.shape[-1].syms) if a.rank and _ratio(a, p["to"]) < 1 else set())


# ---- tensors made from symbolic sizes -------------------------------------------------------

def _made(name, render, shape, dtype, api, doc, params=None):
    return _one(name, lambda a: a.rank >= 1, lambda a: params(a) if params else _neg_dim(a).map(lambda d: {"dim": d}),
                _dim_ok, lambda a, p, out: _fresh(a, out, shape=shape(a, p), dtype=dtype(a, p)),
                render, api, doc)


_made("new_zeros", lambda x, p, a: f"{x}.new_zeros(({dim_text(x, p['dim'])}, 2))",
      lambda a, p: (a.shape[p["dim"]], Dim.literal(2, a.calls)), lambda a, p: a.dtype, "Tensor.new_zeros",
      "new_zeros of a symbolic size")
_made("new_full", lambda x, p, a: f"{x}.new_full(({dim_text(x, p['dim'])}, 1), {py_literal(p['v'])})",
      lambda a, p: (a.shape[p["dim"]], Dim.literal(1, a.calls)), lambda a, p: a.dtype, "Tensor.new_full",
      "new_full of a symbolic size",
      params=lambda a: st.fixed_dictionaries({"dim": _neg_dim(a), "v": st.just(True) if a.dtype == "bool"
                                              else st.sampled_from([1, 2] if not D.is_floating(a.dtype) else [1.5, -2.0])}))
_made("full", lambda x, p, a: f"torch.full({x}.shape, 2, dtype=torch.int64, device={x}.device)",
      lambda a, p: a.shape, lambda a, p: "int64", "torch.full", "full of a value's whole (symbolic) shape")
_made("arange", lambda x, p, a: f"torch.arange({dim_text(x, p['dim'])}, device={x}.device)",
      lambda a, p: (a.shape[p["dim"]],), lambda a, p: "int64", "torch.arange", "arange of a symbolic size")


# ---- in place -------------------------------------------------------------------------

_one("zero_", lambda a: True, lambda a: st.just({}), lambda a, p: None, None,
     lambda x, p, a: f"{x}.zero_()", "Tensor.zero_", "zero_ in place", mutates=True)
_one("fill_", lambda a: True,
     lambda a: st.just({"v": True}) if a.dtype == "bool"
     else st.sampled_from([1.5, -3.0] if D.is_floating(a.dtype) else [3, -1]).map(lambda v: {"v": v}),
     lambda a, p: None if a.dtype != "bool" or p.get("v") is True else "fill_ of a bool takes True",
     None, lambda x, p, a: f"{x}.fill_({py_literal(p['v'])})", "Tensor.fill_", "fill_ in place", mutates=True)


def _index_copy_dims(a):
    return [d for d in range(-a.rank, 0) if a.shape[d].min > 0]


_one("index_copy_", lambda a: a.rank >= 1 and bool(_index_copy_dims(a)),
     lambda a: st.fixed_dictionaries({"dim": st.sampled_from(_index_copy_dims(a)), "c": st.integers(0, 3)}),
     lambda a, p: _dim_ok(a, p) or (None if a.shape[p["dim"]].min > 0 else "index_copy_: empty dim at some call"),
     None,
     lambda x, p, a: (f"{x}.index_copy_({p['dim']}, {index(dim_text(x, p['dim']), dim_text(x, p['dim']), x, 1, p['c'])}, "
                      f"{x}.flip({p['dim']}).clone())"),
     "Tensor.index_copy_", "index_copy_ of x reversed through a rotation index", mutates=True,
     guards=lambda a, p: set(a.shape[p["dim"]].syms))
