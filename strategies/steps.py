"""Step programs for torch_xla: lazy-tensor code cut into graphs by syncs.

Aimed at the seed's bug class (an executable cache keyed on too little):
- a *pool* of independent tensors of one shape, so consecutive graphs take
  inputs of the same shapes while they compute different things;
- *twin* segments: a segment, then a copy with one change (operands swapped,
  a sibling op, in-place <-> out-of-place, another target);
- repeated blocks (cache hits) and blocks whose sizes change between
  repetitions (misses, then hits);
- writes through views (slice, select, transpose, unsqueeze, detach,
  as_strided windows) and reads after later in-place updates;
- fill_ and zero_ through the expanded read-only operand (several elements
  share one location: eager allows those writes there, and no other).
  as_strided views never overlap: torch_xla has no overlapping tensors
  (pytorch/xla#2964) and refuses writes through them.

Valid by construction: shapes, writability and aliasing are tracked while
drawing, so no filter is needed. Nothing here imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from fuzz.program.step_ir import DTYPES, MAX_REPEAT, SYNC_HOW, Block, Step, StepProgram, XlaSettings

from ._validate import check_range

# Simplest first. (1,) is the seed's shape.
SHAPES = ((1,), (2,), (3,), (2, 3), (), (4, 1), (3, 3), (2, 1, 2))
SYMBOL_SIZES = (1, 2, 3, 4, 0)
INT_SCALARS = (1, 2, -1, 3)
FLOAT_SCALARS = (1, 2, -1, 0.5, 1.5)
FILLS = (0, 1, -2, 7)
SEGMENTS = ("plain", "twin", "views", "loop", "sized-loop")
ENDS = ("sync", "observe", "observe+sync")
# Twin mutations, simplest first: the seed's is the in-place toggle.
MUTATIONS = ("toggle-inplace", "swap", "sibling", "retarget")
SIBLINGS = {"add": "sub", "sub": "mul", "mul": "add", "maximum": "minimum", "minimum": "maximum",
            "add_": "sub_", "sub_": "mul_", "mul_": "copy_", "copy_": "add_", "neg": "abs", "abs": "clone",
            "clone": "neg", "zero_": "neg_", "neg_": "abs_", "abs_": "zero_", "fill_": "fill_"}
TOGGLE = {"add": "add_", "sub": "sub_", "mul": "mul_", "add_": "add", "sub_": "sub", "mul_": "mul",
          "neg": "neg_", "neg_": "neg", "abs": "abs_", "abs_": "abs", "clone": "copy_", "copy_": "clone"}


@dataclass
class _T:
    shape: tuple  # ints; symbols inside a sized loop
    storage: int  # views share their base's
    writable: bool = True  # False: an expanded view
    pool: bool = False  # of the program shape, full geometry: a safe operand of any pool op
    # its elements in row-major order from its storage's start, as eager lays it out (as_strided's base: eager
    # strides the storage, torch_xla the logical order; a clone of a transpose keeps the transposed strides)
    rowmajor: bool = True


class _State:
    def __init__(self, shape: tuple, dtype: str):
        self.shape, self.dtype = shape, dtype
        self.t: dict[str, _T] = {}
        self.next_name = self.next_storage = 0
        self.scalars = INT_SCALARS if dtype.startswith("int") else FLOAT_SCALARS

    def fresh(self) -> str:
        self.next_name += 1
        return f"t{self.next_name - 1}"

    def bind(self, name: str, shape, storage=None, **kw) -> None:
        if storage is None:
            self.next_storage += 1
            storage = self.next_storage
        self.t[name] = _T(tuple(shape), storage, **kw)

    def names(self, pred) -> list:
        return [n for n, t in self.t.items() if pred(t)]

    @property
    def targets(self) -> list:
        return self.names(lambda t: t.pool and t.writable)

    @property
    def sources(self) -> list:
        """Operands of the program shape: pool tensors and expanded read-only views."""
        return self.names(lambda t: t.shape == self.shape)

    def sources_for(self, target: str) -> list:
        # A source sharing the target's storage must be a full-geometry alias
        # (itself or a detach), else eager rejects the partial overlap.
        tt = self.t[target]
        return [n for n in self.sources if self.t[n].storage != tt.storage or self.t[n].pool]

    def observable(self) -> list:
        return [n for n, t in self.t.items() if all(isinstance(d, int) for d in t.shape)]


def _itemable(shape) -> bool:
    return all(d == 1 for d in shape)


# -- pool ops: any mix is valid, since every operand has the program shape ---

def _pool_step(d, s: _State) -> Step:
    kind = d(st.sampled_from(("binary", "inplace", "scalar", "unary", "inplace-unary")))
    if kind == "binary":
        op = d(st.sampled_from(("add", "sub", "mul", "maximum", "minimum")))
        a, b = d(st.sampled_from(s.sources)), d(st.sampled_from(s.sources))
        return _bind_out(d, s, Step(op, [a, b]))
    if kind == "unary":
        return _bind_out(d, s, Step(d(st.sampled_from(("neg", "abs", "clone"))), [d(st.sampled_from(s.sources))]))
    target = d(st.sampled_from(s.targets))
    if kind == "inplace":
        op = d(st.sampled_from(("add_", "sub_", "mul_", "copy_")))
        return Step(op, [target, d(st.sampled_from(s.sources_for(target)))])
    if kind == "scalar":
        op = d(st.sampled_from(("add", "add_", "mul", "mul_", "sub", "sub_")))
        step = Step(op, [target], {"other": d(st.sampled_from(s.scalars))})
        return _bind_out(d, s, step) if not op.endswith("_") else step
    op = d(st.sampled_from(("zero_", "neg_", "abs_", "fill_")))
    return Step(op, [target], {"other": d(st.sampled_from(FILLS))} if op == "fill_" else {})


def _bind_out(d, s: _State, step: Step) -> Step:
    """Bind a fresh name, or rebind a pool base (`t1 = t1 + t0`)."""
    bases = s.names(lambda t: t.pool and t.writable)
    rowmajor = all(s.t[a].rowmajor for a in step.args)  # before a rebind of one of them
    step.out = d(st.sampled_from(bases)) if bases and d(st.booleans()) else s.fresh()
    s.bind(step.out, s.shape, pool=True, rowmajor=rowmajor)
    return step


def _replay(s: _State, steps: list) -> None:
    for step in steps:
        if step.out:
            s.bind(step.out, s.shape, pool=True, rowmajor=all(s.t[a].rowmajor for a in step.args))


def _mutate(d, s: _State, segment: list) -> list:
    """A copy of a pool segment with one step changed; still valid, since the
    changed step reads and writes pool tensors only."""
    twin = [Step(x.op, list(x.args), dict(x.params), x.out) for x in segment]
    i = d(st.integers(0, len(twin) - 1))
    x = twin[i]
    how = d(st.sampled_from(MUTATIONS))
    if how == "toggle-inplace" and x.op in TOGGLE:
        new = TOGGLE[x.op]
        if new.endswith("_"):  # `o = a + b` -> `a.add_(b)`; later reads of o read a
            if not s.t[x.args[0]].writable or not s.t[x.args[0]].pool:
                return twin
            if len(x.args) == 2 and x.args[1] not in s.sources_for(x.args[0]):
                return twin
            old, x.op, x.out = x.out, new, ""
            if new == "copy_":  # clone(a) -> a.copy_(a) would be a no-op: copy into the target instead
                x.args = [d(st.sampled_from(s.targets)), x.args[0]]
                if x.args[1] not in s.sources_for(x.args[0]):
                    x.args[1] = x.args[0]
            for later in twin[i + 1:]:
                later.args = [x.args[0] if a == old else a for a in later.args]
                if later.out == old:
                    break
        else:  # `a.add_(b)` -> `o = a + b`
            x.op, x.out = new, s.fresh()
            if new == "clone":
                x.args = x.args[1:]
    elif how == "swap" and len(x.args) == 2:
        a, b = x.args
        if x.out or (s.t[b].writable and s.t[b].pool and a in s.sources_for(b)):
            x.args = [b, a]
    elif how == "sibling" and x.op in SIBLINGS:
        new = SIBLINGS[x.op]
        if new not in ("maximum", "minimum", "copy_") or len(x.args) == 2:  # tensor-only ops need two
            x.op = new
    elif how == "retarget" and not x.out and x.args:
        t = d(st.sampled_from(s.targets))
        if all(a in s.sources_for(t) for a in x.args[1:]):
            x.args[0] = t
    return twin


# -- segments ----------------------------------------------------------------

def _end(d, s: _State) -> list:
    how = d(st.sampled_from(ENDS))
    out = []
    if how.startswith("observe"):
        out.append(_observe(d, s, d(st.lists(st.sampled_from(s.observable()), min_size=1, max_size=3, unique=True))))
    if how.endswith("sync"):
        out.append(Step("sync", params={"how": d(st.sampled_from(SYNC_HOW))}))
    return out


def _observe(d, s: _State, names: list) -> Step:
    itemable = all(_itemable(s.t[n].shape) for n in names)
    how = d(st.sampled_from(("cpu", "item"))) if itemable else "cpu"
    return Step("observe", list(names), {"how": how})


def _plain(d, s: _State, max_steps: int) -> list:
    return [_pool_step(d, s) for _ in range(d(st.integers(1, max_steps)))]


def _view_of(d, s: _State, base: str, params=None) -> tuple[Step, tuple]:
    """A view step on base and the view's shape; `params` repeats an earlier view."""
    shape = s.t[base].shape
    rank = len(shape)
    if params is None:
        ops = ["detach", "unsqueeze"] + (["slice", "select"] if rank and min(shape) > 0 else []) \
            + (["transpose"] if rank >= 2 else []) \
            + (["as_strided"] if math.prod(shape) > 0 and s.t[base].rowmajor else [])
        op = d(st.sampled_from(ops))
        if op == "as_strided":
            params = (op, _strided_params(d, math.prod(shape)))
        elif op == "slice":
            params = _slice_params(d, shape)
        elif op == "select":
            dim = d(st.integers(0, rank - 1))
            params = (op, {"dim": dim, "index": d(st.integers(0, shape[dim] - 1))})
        elif op == "transpose":
            params = (op, {"dim0": d(st.integers(0, rank - 1)), "dim1": d(st.integers(0, rank - 1))})
        elif op == "unsqueeze":
            params = (op, {"dim": d(st.integers(0, rank))})
        else:
            params = (op, {})
    op, p = params
    if op == "slice":
        sh = list(shape)
        sh[p["dim"]] = len(range(p["start"], p["stop"], p.get("step", 1)))
    elif op == "select":
        sh = shape[:p["dim"]] + shape[p["dim"] + 1:]
    elif op == "transpose":
        sh = list(shape)
        sh[p["dim0"]], sh[p["dim1"]] = sh[p["dim1"]], sh[p["dim0"]]
    elif op == "unsqueeze":
        sh = shape[:p["dim"]] + (1,) + shape[p["dim"]:]
    elif op == "as_strided":
        sh = tuple(p["size"])
    else:
        sh = shape
    return Step(op, [base], dict(p)), tuple(sh), params


def _strided_params(d, numel: int) -> dict:
    """as_strided over the first `numel` elements of a fresh tensor's storage:
    elements k apart from `offset` (the last one inside), as one dim or two
    (row- or column-major), so no two elements share a location."""
    offset = d(st.integers(0, numel - 1))
    k = d(st.sampled_from((1, 2)))
    room = (numel - offset - 1) // k + 1  # elements k apart that fit from offset
    if d(st.booleans()) or room < 2:
        size, stride = [d(st.integers(1, room))], [k]
    else:
        b = d(st.integers(1, min(3, room)))
        a = d(st.integers(1, room // b))
        size, stride = ([a, b], [b * k, k]) if d(st.booleans()) else ([a, b], [k, a * k])
    return {"size": size, "stride": stride, "offset": offset}


def _slice_params(d, shape) -> tuple:
    dim = d(st.integers(0, len(shape) - 1))
    start = d(st.integers(0, shape[dim] - 1))
    stop = d(st.integers(start + 1, shape[dim]))
    return ("slice", {"dim": dim, "start": start, "stop": stop, "step": d(st.sampled_from((1, 2)))})


def _views(d, s: _State, max_steps: int) -> list:
    """Writes through a view of a pool tensor, optionally from the same view of
    another pool tensor, and slice assignment into the base."""
    bases = s.names(lambda t: t.pool and t.writable)
    base = d(st.sampled_from(bases))
    step, shape, params = _view_of(d, s, base)
    v = step.out = s.fresh()
    s.bind(v, shape, storage=s.t[base].storage, pool=params[0] == "detach" and shape == s.shape,
           rowmajor=params[0] == "detach" and s.t[base].rowmajor)
    out = [step]
    chained = _offset_as_strided(d, s, base, params, v)
    if chained is not None:  # the writes below go through the window; no twin repeats the chain
        out.append(chained)
        v, shape = chained.out, s.t[chained.out].shape
    others = [b for b in bases if s.t[b].storage != s.t[base].storage
              and (params[0] != "as_strided" or s.t[b].rowmajor)] if chained is None else []
    w = None
    if others and d(st.booleans()):
        twin, _, _ = _view_of(d, s, d(st.sampled_from(others)), params)
        w = twin.out = s.fresh()
        s.bind(w, shape, storage=s.t[twin.args[0]].storage, rowmajor=False)
        out.append(twin)
    for _ in range(d(st.integers(1, max(1, max_steps // 2)))):
        kind = d(st.sampled_from(("scalar", "from-view", "unary", "setitem", "read")))
        if kind == "from-view" and w is not None:
            out.append(Step(d(st.sampled_from(("copy_", "add_", "mul_"))), [v, w]))
        elif kind == "unary":
            op = d(st.sampled_from(("zero_", "neg_", "fill_")))
            out.append(Step(op, [v], {"other": d(st.sampled_from(FILLS))} if op == "fill_" else {}))
        elif kind == "setitem" and s.shape:
            # base[.., a:b] = the parallel view (same slice of another tensor) or a scalar
            same = params[0] == "slice"
            sl = params[1] if same else _slice_params(d, s.shape)[1]
            src = [w] if same and w is not None and d(st.booleans()) else []
            out.append(Step("setitem", [base] + src, {**sl, **({} if src else {"other": d(st.sampled_from(FILLS))})}))
        elif kind == "read":
            r = s.fresh()
            out.append(Step("add", [v, w] if w else [v], {} if w else {"other": d(st.sampled_from(s.scalars))}, r))
            s.bind(r, shape, rowmajor=False)  # the layout of a view's sum is eager's choice
        else:
            out.append(Step(d(st.sampled_from(("add_", "mul_", "sub_"))), [v], {"other": d(st.sampled_from(s.scalars))}))
    if d(st.booleans()):
        out += _small_writes(d, s)
    if d(st.booleans()):
        out += _expanded_fills(d, s)
    return out


def _offset_as_strided(d, s: _State, base: str, params: tuple, view: str) -> Step | None:
    """At times (one select in two), `view.as_strided(size, stride)` with the implicit storage offset, where
    view is a select on dim 0 of a row-major base, so it starts past element 0: eager starts the
    window at the view's storage offset. The window stays inside the view's own elements, which are row-major
    from that offset, so eager and torch_xla's logical order agree (a slice there would not: see docs/xla.md)."""
    op, p = params
    numel = math.prod(s.t[view].shape)
    if op != "select" or p["dim"] != 0 or not s.t[base].rowmajor or numel == 0 or not d(st.booleans()):
        return None
    sp = _strided_params(d, numel)
    del sp["offset"]  # implicit: the view's own; the window fits from there since it fit from sp's offset
    w = s.fresh()
    s.bind(w, tuple(sp["size"]), storage=s.t[base].storage, rowmajor=False)
    return Step("as_strided", [view], sp, w)


def _small_writes(d, s: _State) -> list:
    """Write to a tensor that an expanded (read-only) view reads."""
    small = s.names(lambda t: not t.pool and t.writable and t.shape == tuple(1 for _ in s.shape) and t.shape != s.shape)
    if not small:
        return []
    return [Step("add_", [d(st.sampled_from(small))], {"other": d(st.sampled_from(s.scalars))})]


# Writes through an expanded view that eager refuses ("unsupported operation: more than one element of the
# written-to tensor refers to a single memory location"): drawn in one draw of six, so that
# what torch_xla does there is judged (an eager-only error where it writes).
_REFUSED = ("add_", "mul_", "neg_")
_REFUSED_DRAWS = (False,) * 5 + (True,)


def _expanded_fills(d, s: _State) -> list:
    """fill_ or zero_ through the expanded read-only operand: its small tensor
    takes the value (the writes eager allows where elements share a location);
    at times a write eager refuses there (_REFUSED)."""
    expanded = s.names(lambda t: not t.writable)
    if not expanded:
        return []
    target = d(st.sampled_from(expanded))
    if d(st.sampled_from(_REFUSED_DRAWS)):
        op = d(st.sampled_from(_REFUSED))
        return [Step(op, [target], {"other": d(st.sampled_from(s.scalars))} if op != "neg_" else {})]
    op = d(st.sampled_from(("fill_", "zero_")))
    return [Step(op, [target], {"other": d(st.sampled_from(FILLS))} if op == "fill_" else {})]


def _sized_loop(d, s: _State, max_steps: int, max_repeat: int) -> Block:
    """Fresh tensors of shape (n0, ...) whose size changes between repetitions;
    sizes repeat first (cache hit), then change (miss)."""
    reps = d(st.integers(2, max(2, max_repeat)))
    sizes = d(st.lists(st.sampled_from(SYMBOL_SIZES), min_size=reps, max_size=reps))
    shape = ("n0",) + d(st.sampled_from(((), (2,))))
    local = _State(shape, s.dtype)
    local.next_name, local.next_storage = s.next_name, s.next_storage
    x, y = local.fresh(), local.fresh()
    steps = [Step("rand", params={"shape": list(shape), "seed": d(st.integers(0, 99))}, out=x),
             Step("full", params={"shape": list(shape), "value": d(st.sampled_from(FILLS))}, out=y)]
    local.bind(x, shape, pool=True)
    local.bind(y, shape, pool=True)
    steps += _plain(d, local, max(1, max_steps // 2))
    s.next_name, s.next_storage = local.next_name, local.next_storage
    if s.targets and d(st.booleans()):  # an accumulator outside the loop, updated each repetition
        steps.append(_pool_step(d, s))
    # Observe a loop tensor in every repetition (its shape is symbolic, so through the loop's label).
    steps.append(Step("observe", [d(st.sampled_from(local.names(lambda t: True)))], {"how": "cpu"}))
    steps.append(Step("sync", params={"how": d(st.sampled_from(SYNC_HOW))}))
    last = sizes[-1]
    for n, t in local.t.items():  # after the loop they keep the last repetition's shape
        s.bind(n, tuple(last if dim == "n0" else dim for dim in t.shape), rowmajor=t.rowmajor)
    return Block(steps=steps, repeat=reps, sizes={"n0": sizes})


def _prologue(d, s: _State) -> list:
    out = []
    for _ in range(d(st.integers(2, 4))):
        name = s.fresh()
        how = d(st.sampled_from(("tensor", "rand", "full")))
        if how == "tensor":
            out.append(Step("tensor", params={"data": _literal(d, s.shape, s.scalars)}, out=name))
        elif how == "rand":
            out.append(Step("rand", params={"shape": list(s.shape), "seed": d(st.integers(0, 99))}, out=name))
        else:
            out.append(Step("full", params={"shape": list(s.shape), "value": d(st.sampled_from(FILLS))}, out=name))
        s.bind(name, s.shape, pool=True)
    ones = tuple(1 for _ in s.shape)
    if ones != s.shape and d(st.booleans()):  # a read-only operand: a small tensor expanded
        k, e = s.fresh(), s.fresh()
        out += [Step("tensor", params={"data": _literal(d, ones, s.scalars)}, out=k),
                Step("expand", [k], {"shape": list(s.shape)}, out=e)]
        s.bind(k, ones)
        s.bind(e, s.shape, storage=s.t[k].storage, writable=False, rowmajor=False)
    out.append(Step("sync", params={"how": d(st.sampled_from(SYNC_HOW))}))
    return out


def _literal(d, shape, scalars):
    if not shape:
        return d(st.sampled_from(scalars))
    return [_literal(d, shape[1:], scalars) for _ in range(shape[0])]


def _donate(d, s: _State) -> list:
    """Donate a pool tensor's buffer right before a sync; the tensor and all its
    aliases are never used again (reading a donated buffer is a user error).
    Never a one-element tensor: torch_xla's device-data cache shares such
    buffers with later transfers of the same value, in later cases too, so the
    donation would break the rest of the process, not this case."""
    bases = s.names(lambda t: t.pool and t.writable)
    if len(bases) < 3 or math.prod(s.shape) < 2:
        return []
    name = d(st.sampled_from(bases))
    dead = s.t[name].storage
    for n in s.names(lambda t: t.storage == dead):
        del s.t[n]
    return [Step("donate", [name]), Step("sync", params={"how": d(st.sampled_from(SYNC_HOW))})]


def _settings(env_knobs: bool, donation: bool):
    donor = st.sampled_from((False, True)) if donation else st.just(False)
    if not env_knobs:
        return donor.map(lambda b: XlaSettings(donor_config=b))
    return st.builds(XlaSettings, param_aliasing=st.sampled_from((None, False, True)),
                     functionalization=st.sampled_from((True, False)),
                     cache_size=st.sampled_from((None, 1, 2, 4)), donor_config=donor)


def step_programs(*, dtypes=DTYPES, max_segments: int = 4, max_steps: int = 4, max_repeat: int = 3,
                  env_knobs: bool = False, donation: bool = True) -> st.SearchStrategy:
    """StepPrograms: a prologue that makes a pool of same-shaped tensors, then
    up to `max_segments` segments (plain, twin, views, loop, sized-loop), each
    ending in a sync or an observation, and a final read of every tensor.
    `env_knobs` draws the settings that need a fresh process (param aliasing,
    functionalization, a small compilation cache); `donation` allows `donate`
    steps and the buffer-donor config.

    Shrinks towards: int64, shape (1,), two tensors, one plain segment of one
    add, sync endings, the in-place/out-of-place toggle for twins, loops of 2,
    sizes 1, default settings."""
    dts = [x for x in DTYPES if x in dtypes]
    if not dts:
        raise InvalidArgument(f"dtypes={dtypes!r} has none of {DTYPES}")
    check_range("max_segments", 1, "max_segments", max_segments, floor=1)
    check_range("max_steps", 1, "max_steps", max_steps, floor=1)
    check_range("max_repeat", 1, "max_repeat", max_repeat, floor=1)
    if max_repeat > MAX_REPEAT:
        raise InvalidArgument(f"max_repeat={max_repeat} exceeds {MAX_REPEAT}")
    for name, v in (("env_knobs", env_knobs), ("donation", donation)):
        if not isinstance(v, bool):
            raise InvalidArgument(f"{name}={v!r} must be a bool")
    segments = SEGMENTS if max_repeat >= 2 else SEGMENTS[:3]

    @st.composite
    def draw(d):
        s = _State(d(st.sampled_from(SHAPES)), d(st.sampled_from(dts)))
        blocks = [Block(_prologue(d, s))]
        for _ in range(d(st.integers(1, max_segments))):
            kind = d(st.sampled_from(segments))
            if kind == "sized-loop":
                blocks.append(_sized_loop(d, s, max_steps, max_repeat))
                continue
            if kind == "views":
                blocks.append(Block(_views(d, s, max_steps) + _end(d, s)))
                continue
            body = _plain(d, s, max_steps)
            if kind == "loop":
                blocks.append(Block(body + _end(d, s), repeat=d(st.integers(2, max_repeat))))
                continue
            blocks.append(Block(body + _end(d, s)))
            if kind == "twin":
                twin = _mutate(d, s, body)
                _replay(s, twin)
                blocks.append(Block(twin + _end(d, s)))
            if donation and d(st.booleans()):
                donated = _donate(d, s)
                if donated:
                    blocks.append(Block(donated))
        names = s.observable()
        final = [Step("observe", names[i:i + 8], {"how": "cpu"}) for i in range(0, len(names), 8)]
        if all(_itemable(s.t[n].shape) for n in names) and d(st.booleans()):
            for f in final:
                f.params["how"] = "item"
        blocks.append(Block(final))
        return StepProgram(blocks=blocks, dtype=s.dtype, settings=d(_settings(env_knobs, donation)))

    return draw()
