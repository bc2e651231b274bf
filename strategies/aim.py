"""Pair-aimed draws (the default: pairs blind draws leave unmet): each program aims at AIMS pairs of
pairwise coverage (a value's feature x the op that consumes it,
fuzz/program/pairs.py) and is made to hold them.

Which pairs: the campaign's pairs at the op grain (its menu's ops x every
feature), grouped by feature, in an order drawn from the seed; program k of
batch b aims at the next AIMS of them, so a campaign aims at every pair once
before any twice. The aims depend on (seed, batch, k) alone, as swarm
batches do on (seed, batch) (strategies/swarm.py): a resume and every
drawing process draw the same stream. The pairs seen so far are not
consulted: they would tie a batch to the programs of the batches before it,
which processes drawing ahead and a resume from a checkpoint do not have.

How: a program drawn from a menu narrowed towards the first aim's feature
(the layout among the layouts drawn, the mark among the marks, the dtype
class as the dtypes, the producer's family as the families, the setting
fixed), then, for each aim it does not already hold, the aimed op appended,
reading a value with the feature (as its first operand, else its second);
where none suits, a fresh input with the feature, or a fresh aliasing input,
that the op takes. Every result is type checked; a program that holds none
of its aims is a blind draw instead (docs/generator.md, "Pair-aimed draws")."""

from __future__ import annotations

import copy
import random

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.ir import MARKS, Program, ProgramError, TensorInput
from fuzz.program.layouts import LAYOUTS, view_shape
from fuzz.program.opdb import OPS
from fuzz.program.opspec import FAMILIES
from fuzz.program.pairs import DTYPE_CLASS, feature_names, pairs_of, value_features
from fuzz.program.typecheck import over_limits, typecheck

from .programs import _Draft, in_backward, programs, writable_in_backward

PER_BATCH = 100  # a campaign's batch of programs (fuzz.campaign.generate.BATCH)
# Pairs a program aims at (each appends an op where the program lacks the pair): a pass over the ~9000 pairs
# of a CPU campaign every 3000 programs.
AIMS = 3


def narrowed(kw: dict, feature: str, spec) -> dict:
    """programs()'s keyword arguments `kw`, narrowed so that a value with `feature` that `spec` may read is
    likely (module docstring)."""
    axis, _, value = feature.partition(":")
    out = dict(kw)
    if axis == "layout" or axis == "offset":
        want = value if axis == "layout" else "offset"
        out["layouts"] = tuple(x for x in kw.get("layouts", LAYOUTS) if x in ("contiguous", want))
    elif axis == "alias" and value == "before":  # a view of the elements before an offset input's
        out["layouts"] = tuple(x for x in kw.get("layouts", LAYOUTS) if x in ("contiguous", "offset"))
    elif axis == "mark":
        out["marks"] = tuple(m for m in kw.get("marks", MARKS) if m in ("static", value))
    elif axis == "dtype":
        dts = tuple(t for t in kw.get("dtypes", D.ALL) if DTYPE_CLASS[t] == value and t in spec.dtypes)
        out["dtypes"] = dts or kw.get("dtypes", D.ALL)
    elif axis == "producer":
        fams = kw.get("families", FAMILIES)
        out["families"] = tuple(f for f in fams if f in (value, spec.family))
    elif axis == "backward":
        if kw.get("backward_every", 4) is not None:
            out["backward_every"] = 1 if value == "True" else None
    elif axis == "fullgraph":
        out["fullgraph_draws"] = (value == "True",)
    elif axis == "mode":
        out["modes"] = (None if value == "default" else value,)
    return out


def _by_symbol(p: Program) -> dict:
    """symbol -> the mark its dims carry (marks are drawn per symbol, the same in every input)."""
    out = {}
    for x in p.inputs:
        for dim, m in zip(x.shape, x.marks):
            if isinstance(dim, str):
                out.setdefault(dim, m)
    return out


def _marked_like(x: TensorInput, by_symbol: dict) -> TensorInput:
    """x with its symbol dims marked as the program marks them: marking one input's s0 and not another's
    makes broadcasting specialise it."""
    x.marks = [by_symbol.get(dim, "static") if isinstance(dim, str) else "static" for dim in x.shape]
    return x


def _alias_input(p: Program, view: str, flips: bool, new_base: bool = False) -> TensorInput | None:
    """A new input that is a `view` of an input of p (as strategies.programs.aliases makes one), or None.
    Where no input can be its base, or with `new_base`, a new one is added first (two-dim float32, an offset
    one for `before`: most ops take it)."""
    made = None if new_base else _alias_of(p, view, flips)
    if made is None:
        sym = next(iter(p.sizes))
        base = TensorInput(name=f"x{len(p.inputs)}", shape=[sym, 3], dtype="float32",
                           layout="offset" if view == "before" else "contiguous")
        p.inputs.append(_marked_like(base, _by_symbol(p)))
        made = _alias_of(p, view, flips, p.inputs[-1])
    return made


def _alias_of(p: Program, view: str, flips: bool, only=None) -> TensorInput | None:
    for base in [only] if only is not None else p.inputs:
        if base.alias:
            continue
        alias = {"of": base.name, "view": view}
        if view == "narrow":
            dims = [k for k, n in enumerate(base.shape) if (min(p.sizes[n]) if isinstance(n, str) else n) >= 2]
            if not dims:
                continue
            low = min(p.sizes[base.shape[dims[0]]]) if isinstance(base.shape[dims[0]], str) else base.shape[dims[0]]
            alias.update(dim=dims[0], start=1, length=min(low - 1, 2))
        elif view == "before":
            if base.layout != "offset":
                continue
            alias["length"] = base.offset
        elif view == "transpose" and len(base.shape) < 2:
            continue
        if flips:
            alias["calls"] = [i % 2 == 0 for i in range(p.calls)]
        shape = view_shape(alias, base)
        if shape is not None:
            return _marked_like(TensorInput(name=f"x{len(p.inputs)}", shape=shape, dtype=base.dtype, alias=alias),
                                _by_symbol(p))
    return None


def _with_feature(p: Program, info: dict, feature: str) -> list:
    """The values of p that have `feature` (any value, for a setting)."""
    names = [x.name for x in p.inputs] + [o.out for o in p.ops]
    if feature.partition(":")[0] in ("backward", "fullgraph", "mode"):
        return names[::-1]
    return [n for n in reversed(names) if feature in value_features(p, info, n)]


@st.composite
def aimed(d, kw: dict, aims: list):
    """A program holding some of the pairs `aims` (feature, op), all of one feature as a rule: drawn narrowed
    towards the first one's feature, with room for an op per aim; else a blind draw from programs(**kw).
    None for the simplest draw (where the choice below is 0): fuzz.campaign.generate draws it first in each
    run and keeps the last, and a None costs nothing to draw."""
    if not d(st.integers(0, 255)):
        return None
    max_ops = kw.get("max_ops", 6)
    feature, op = aims[0]
    # an unbacked mark only on a symbol no op guards on: none drawn before the aimed ops, which then may
    room = 0 if feature == "mark:unbacked" else max(1, max_ops - len(aims))
    p = d(_programs({**narrowed(kw, feature, OPS[op]), "min_ops": min(1, room), "max_ops": room}))
    # the narrowed menu may lack what continues its last value; room is left for the aims
    p, info = _followed(d, p, typecheck(p), kw, max_ops - len(aims))
    held, hit = pairs_of(p, info)["op"], False
    for feature, op in aims:
        if (feature, op) in held:
            hit = True
        elif len(p.ops) < max_ops:
            made = _append(d, p, info, feature, OPS[op], kw)
            if made is not None:
                (p, info), hit = _followed(d, made[0], made[1], kw), True
                held = pairs_of(p, info)["op"]
    return p if hit else d(_programs(kw))


# Ops drawn after the aims while the last value starts one of the conjunctions programs() pulls towards
# (strategies/programs.py, _pulled: an eval-mode batch_norm, then a crop, then a matrix product; a two-dim
# crop; any/all of uint8; ...). An aimed op is appended last, and the program ended there: the eval
# batch_norm chain was in 0 of 3000 pair-aimed programs on seeds 0 and 4 without this.
FOLLOW = 2


def _followed(d, p: Program, info: dict, kw: dict, limit: int | None = None) -> tuple:
    """(program, its ValueInfos `info`): p with up to FOLLOW more ops (`limit`, else max_ops, in all), each
    drawn as programs() draws its next op but always reading the latest value, while that value is one _pulled
    continues; p itself where the next would not type check."""
    from .programs import _draw_op, _pulled, op_menus

    menu, grad_menu = op_menus(kw.get("families", FAMILIES), kw.get("ops"), kw.get("device", "cpu"))
    for _ in range(FOLLOW):
        if not p.ops or len(p.ops) >= (kw.get("max_ops", 6) if limit is None else limit):
            break
        if _pulled(_draft_of(p, info, kw)) != p.ops[-1].out:  # read only: p's own lists
            break
        draft = _draft_of(copy.deepcopy(p), info, kw)  # the op drawn may add inputs to it
        backward = p.settings.backward
        call = _draw_op(d, draft, grad_menu if backward else menu, f"v{len(p.ops)}", backward, pull=(True,))
        made = None if call is None else _with_call(p, draft, call)
        if made is None:
            break
        p, info = made
    return p, info


def _draft_of(p: Program, info: dict, kw: dict) -> _Draft:
    """A _Draft holding p's inputs and values (p's own lists: pass a copy where ops may add inputs)."""
    draft = _Draft(p.sizes, p.inputs, kw.get("layouts", LAYOUTS), kw.get("dtypes", D.ALL))
    draft.env = dict(info)
    draft.values = [o.out for o in p.ops]
    draft.made = {o.out: o for o in p.ops}
    draft.backward = p.settings.backward
    return draft


def _with_call(p: Program, draft: _Draft, call, before: int | None = None):
    """(program, its ValueInfos): p's ops and `call` over draft's inputs (those past `before` are fresh:
    marked as p marks its symbols); None where the result does not type check or `call` guards on a symbol
    marked unbacked (the generator marks unbacked only the symbols no op guards on)."""
    by_symbol = _by_symbol(p)
    spec = OPS[call.op]
    if any(by_symbol.get(s) == "unbacked" for s in spec.guards([draft.env[a] for a in call.args], call.params)):
        return None
    for x in draft.inputs[len(p.inputs) if before is None else before:]:
        _marked_like(x, by_symbol)
    ops = p.ops + [call]
    used = {a for o in ops for a in o.args}
    out = Program(sizes=p.sizes, inputs=draft.inputs, ops=ops,
                  outputs=[o.out for o in ops if o.out not in used] or [call.out], settings=p.settings, seed=p.seed)
    try:
        return out, typecheck(out)
    except ProgramError:
        return None


_STRATEGIES: dict = {}  # repr of programs()'s arguments -> its strategy


def _programs(kw: dict):
    """programs(**kw), made once: made for every draw, its composite is decorated (and its source read by
    Hypothesis) each time."""
    key = repr(sorted(kw.items()))
    if key not in _STRATEGIES:
        _STRATEGIES[key] = programs(**kw)
    return _STRATEGIES[key]


def _append(d, p: Program, info: dict, feature: str, spec, kw: dict):
    """(program, its ValueInfos, its op-grain pairs): p with an op of `spec` appended that reads a value with
    `feature` (for an alias feature, an aliasing input added where none has it); None where it cannot."""
    if p.settings.backward and not in_backward(spec):
        return None
    made = _append_once(d, p, info, feature, spec, kw, fresh=False)
    if made is None and feature.partition(":")[0] in _FRESH_AXES:  # no value that suits: a fresh input that does
        made = _append_once(d, p, info, feature, spec, kw, fresh=True)
    return made


def _append_once(d, p: Program, info: dict, feature: str, spec, kw: dict, fresh: bool):
    p = copy.deepcopy(p)
    axis, _, value = feature.partition(":")
    alias = None
    if axis == "alias" and (fresh or not _with_feature(p, info, feature)):
        alias = _alias_input(p, "same" if value in ("flips", "base") else value, value == "flips", new_base=fresh)
        if alias is None:
            return None
        p.inputs.append(alias)
        try:
            info = typecheck(p)
        except ProgramError:
            return None
    draft = _draft_of(p, info, kw)
    before = len(p.inputs)
    if fresh and alias is not None:
        readers = [alias.alias["of"] if value == "base" else alias.name]
    elif fresh:
        name = _fresh_reader(d, draft, spec, feature, _by_symbol(p))
        readers = [] if name is None else [name]
    else:
        readers = _with_feature(p, info, feature)
    call = _call_reading(d, draft, spec, readers, p.settings.backward, f"v{len(p.ops)}")
    if call is None:
        return None
    made = _with_call(p, draft, call, before)
    if made is None:
        return None
    out, info = made
    held = pairs_of(out, info)["op"]
    return (out, info, held) if (feature, spec.name) in held else None


# Features a fresh input can carry (a mark is drawn per symbol for every input).
_FRESH_AXES = ("layout", "offset", "alias", "dtype", "backward", "fullgraph", "mode")


def _fresh_reader(d, draft, spec, feature: str, by_symbol: dict) -> str | None:
    """A new input of draft with `feature` that `spec` takes as its first operand (the first of a few shapes
    that suits it), or None."""
    from fuzz.program.typecheck import input_info

    from .shapes import _layout_fields

    axis, _, value = feature.partition(":")
    syms = list(draft.sizes)
    a, b = syms[0], syms[1] if len(syms) > 1 else 4
    klass = value if axis == "dtype" else "float"
    dts = [t for t in draft.dtypes if t in spec.dtypes and DTYPE_CLASS[t] == klass] or \
        [t for t in draft.dtypes if t in spec.dtypes]
    if not dts:
        return None
    values = [draft.env[n] for n in draft.inputs_names + draft.values]
    layout = value if axis == "layout" else "offset" if axis == "offset" else "contiguous"
    # symbol shapes first, then literal ones (no symbol an unbacked mark forbids the op to guard on)
    for shape in ([a, b], [a], [2, a, b], [2, 3, a, b], [a, 1], [2, 3, 2, a, b], [3, 4], [2, 3, 4], [2, 4, 3, 5]):
        if not _fits_layout(layout, len(shape)) or any(by_symbol.get(x) == "unbacked" for x in shape):
            continue  # (an op reading an unbacked size may guard on it: the generator never lets it)
        fields = d(_layout_fields(len(shape), [layout]))
        if axis == "offset":
            fields["offset"] = int(value)
        x = _marked_like(TensorInput(name=f"x{len(draft.inputs)}", shape=shape, dtype=dts[0], **fields), by_symbol)
        info = input_info(Program(sizes=draft.sizes, inputs=draft.inputs + [x], ops=[], outputs=[]), x)
        if spec.applicable(info, values + [info]):
            draft.inputs.append(x)
            draft.env[x.name] = info
            draft.inputs_names.append(x.name)
            return x.name
    return None


def _fits_layout(layout: str, rank: int) -> bool:
    """As strategies.shapes.layouts fits them."""
    return {"contiguous": True, "offset": True, "transposed": rank >= 2, "channels_last": rank in (4, 5),
            "permuted": rank >= 2}.get(layout, rank >= 1)


def _call_reading(d, draft, spec, candidates: list, backward: bool, out: str):
    """An OpCall of `spec` reading one of `candidates` (first operand, else second), the other operands drawn
    as programs() draws them; None where none fits."""
    from .programs import _FRESH, _draw_ref, _fresh_dtype

    env = draft.env
    values = [env[n] for n in draft.inputs_names + draft.values]

    def first_ok(n):
        a = env[n]
        return spec.applicable(a, values) and not (spec.mutates and backward
                                                    and not writable_in_backward(draft.made, n, a, env))

    names = next(([n] for n in candidates if first_ok(n)), None)
    if names is None and spec.arity >= 2:
        names = next(([f, n] for n in candidates for f in draft.inputs_names + draft.values[::-1]
                      if f != n and first_ok(f) and spec.fits([env[f]], env[n])), None)
    if names is None:
        return None
    args = [env[n] for n in names]
    while len(names) < spec.arity:
        fresh = spec.fresh_info(args)
        want_fresh = d(st.sampled_from(_FRESH))
        name = None if (want_fresh and fresh) else _draw_ref(d, draft, ok=lambda n: spec.fits(args, env[n]))
        if name is None:
            if fresh is None:
                return None
            name = draft.add_input(d, spec.operand(args), _fresh_dtype(d, spec, args, draft.dtypes))
        names.append(name)
        args.append(env[name])
    params = d(spec.params(args))
    if backward and spec.grad_params:
        params = spec.grad_params(params)
    if spec.check(args, params) or over_limits(spec.infer(args, params, out)):
        return None
    from fuzz.program.ir import OpCall

    return OpCall(op=spec.name, args=names, params=params, out=out)


class PairPrograms:
    """A program strategy per program (fuzz.campaign.generate draws program k of batch b from
    each_at(seed, b, size)[k]): each aims at the next AIMS pairs of the seed's order (aimed)."""

    def __init__(self, **kw):
        self.kw = kw
        self._orders: dict = {}  # seed -> the campaign's pairs in that seed's order

    def pairs(self) -> list:
        """The campaign's pairs at the op grain: its menu's ops x every feature."""
        from fuzz.devices import device_type

        fams = self.kw.get("families") or FAMILIES
        ops = [o.name for o in OPS if o.family in fams and (not self.kw.get("ops") or o.name in self.kw["ops"])
               and o.runs_on(device_type(self.kw.get("device", "cpu")))]
        return [(f, o) for f in feature_names(self.kw.get("modes", (None,))) for o in ops]

    def order(self, seed: int) -> list:
        """The pairs grouped by feature (the features in an order drawn from the seed, each one's ops too):
        consecutive aims share a feature, which one narrowed draw serves."""
        if seed not in self._orders:
            rng = random.Random(f"shapefuzz-pairs:{seed}")
            by_feature: dict = {}
            for f, o in self.pairs():
                by_feature.setdefault(f, []).append(o)
            features = list(by_feature)
            rng.shuffle(features)
            order = []
            for f in features:
                ops = by_feature[f]
                rng.shuffle(ops)
                order += [(f, o) for o in ops]
            self._orders[seed] = order
        return self._orders[seed]

    def aims(self, seed: int, batch: int, size: int = PER_BATCH) -> list:
        """The pairs program k of batch `batch` aims at, for each k: AIMS of them, the next in the seed's order."""
        order = self.order(seed)
        at = batch * size * AIMS
        return [[order[(at + k * AIMS + j) % len(order)] for j in range(AIMS)] for k in range(size)]

    def each_at(self, seed: int, batch: int, size: int) -> list:
        """A strategy per program of the batch (fuzz.campaign.generate draws each in a Hypothesis run of its
        own: in one run the programs' aims, drawn, would repeat)."""
        return [aimed(self.kw, aims) for aims in self.aims(seed, batch, size)]
