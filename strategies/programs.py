"""Whole programs: inputs, a straight-line op sequence, markings, settings."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.ir import MARKS, OpCall, Program, RunSettings, TensorInput
from fuzz.program.layouts import LAYOUTS
from fuzz.program.opdb import OPS
from fuzz.program.ops.contract import CONTRACT_OPS
from fuzz.program.ops.pads import cropped_dims
from fuzz.program.opspec import FAMILIES
from fuzz.program.ir import MAX_RANK
from fuzz.program.symbolic import after_write
from fuzz.program.typecheck import input_info, over_limits

from ._validate import check_range
from .markings import dynamic_markings, mark_styles, symbol_marks
from .settings import DYNAMO, compile_options, dynamo_settings, modes as mode_draws
from .aliasing import aliases
from .shapes import input_like, size_schedules, tensor_inputs

CALL_CHOICES = (3, 4, 5)
# Continue-coin for the op list: False (stop) first so lists shrink shorter.
_MORE = (False, True, True, True)
# After a value the next op should read (_pulled): a program ended there in one draw of four.
_MORE_AFTER_PULL = (False,) + (True,) * 7
# Families drawn more often than one share: they apply to fewer values (float
# matrices, NCHW tensors) and are where dynamic-shape consumers of pads and
# views break. Listed after the simple ones, so shrinking still moves away.
FAMILY_WEIGHTS = {"matrix": 3, "nn": 2, "index": 2, "resample": 2}
# Ops drawn more often than one share of their family (each new op is in at least 1% of
# the programs they apply to, measured by scripts/reach.py): each is one of many
# in a large family, and applies to most values.
OP_WEIGHTS = {"view_dtype": 7, "reshape_lit": 6, "squeeze_dynamic": 2, "mask_keep": 4, "as_strided_free": 3}
# How often a forward program ends in an op eager refuses on purpose (fuzz/program/ops/contract.py): one draw
# in 32, about 3%, so that such programs, judged for error parity only, do not crowd out valid ones. Never
# first: a program shrinks to one without it.
CONTRACT_DRAWS = (False,) * 31 + (True,)


def _exact_unbacked(draft, name, a) -> bool:
    return any(d.is_exact_unbacked for d in a.shape)


def _cropped_twice(draft, name, a) -> bool:
    call = draft.made.get(name)
    if call is None or call.op != "pad" or call.args[0] in draft.inputs_names:
        return False
    return cropped_dims(call.params.get("pad", [])) >= 2


def _uint8_any_all(draft, name, a) -> bool:
    call = draft.made.get(name)
    return call is not None and call.op in ("any", "all") and draft.env[call.args[0]].dtype == "uint8"


def _writable_clone_or_view(draft, name, a) -> bool:
    """In a backward program: a clone, or a view of a value, that may be written in place."""
    call = draft.made.get(name)
    return (draft.backward and call is not None and (call.op == "clone" or call.op in _WRITABLE_VIEWS)
            and writable_in_backward(draft.made, name, a, draft.env))


def _eval_norm_2d(draft, name, a) -> bool:
    """An eval-mode batch_norm of rank 2 or 3 (what a crop then a matrix product takes)."""
    call = draft.made.get(name)
    return call is not None and call.op == "batch_norm" and not call.params["training"] and a.rank in (2, 3)


def _written_inputs(draft) -> set:
    return {draft.env[c.args[0]].root for c in draft.made.values() if OPS[c.op].mutates} & set(draft.inputs_names)


def _int_from_written_input(draft, name, a) -> bool:
    """A fresh integer value computed from an input after an in-place write to it."""
    call = draft.made.get(name)
    if call is None or a.root != name or a.dtype not in D.INTEGRAL or a.rank < 1:
        return False
    written, todo = _written_inputs(draft), list(call.args)
    while todo:  # its sources, back to the inputs
        n = todo.pop()
        if n in written:
            return True
        if n in draft.made:
            todo += draft.made[n].args
    return False


def _permuted_value(draft, name) -> bool:
    """Dims not in storage order: a permuted, transposed or channels_last input, a permute or transpose, or a
    view or pointwise result of one (eager's pointwise ops keep their first operand's layout)."""
    while name in draft.made:
        call = draft.made[name]
        if call.op in ("permute", "transpose"):
            return True
        if OPS[call.op].family not in ("view", "pointwise", "binary"):
            return False
        name = call.args[0]
    x = next(x for x in draft.inputs if x.name == name)
    return x.layout in ("permuted", "transposed", "channels_last")


def _permuted_4d(draft, name, a) -> bool:
    return a.rank == 4 and D.is_floating(a.dtype) and _permuted_value(draft, name)


def _pointwise_over_permuted(draft, name, a) -> bool:
    call = draft.made.get(name)
    return (call is not None and OPS[call.op].family in ("pointwise", "binary") and a.rank >= 1
            and _permuted_value(draft, call.args[0]))


def _gapped_unfold(draft, name, a) -> bool:
    """An unfold whose step is at least its size: windows with gaps, writable in place (ops/shape_ops.py)."""
    call = draft.made.get(name)
    return call is not None and call.op == "unfold" and not a.overlapping and call.params["step"] >= call.params["size"]


def _unwritten_alias_member(draft, name, a) -> bool:
    """An input of a pair that shares storage, neither member written yet (a forward program: a backward
    one writes no input)."""
    x = next((x for x in draft.inputs if x.name == name), None)
    if x is None or draft.backward or _written_inputs(draft) & {x.name, (x.alias or {}).get("of")}:
        return False
    return bool(x.alias) or any((y.alias or {}).get("of") == name for y in draft.inputs)


def _alias_after_base_write(draft, name, a) -> bool:
    """An input aliasing another that an earlier op wrote in place."""
    x = next((x for x in draft.inputs if x.name == name), None)
    return x is not None and bool(x.alias) and x.alias["of"] in _written_inputs(draft)


# Families drawn more often where the first operand was made a certain way: the conjunctions bugs sit in
# (an unbacked size met by another; a cropping pad feeding a matrix op; arithmetic on any/all of uint8)
# were each under 1% of the programs they apply to with FAMILY_WEIGHTS alone (scripts/reach.py). The first
# entry that holds gives that draw's weights.
AFFINITY = (
    # and views, which squeeze it or reshape it to a literal shape (of a size the compiler cannot know)
    (_exact_unbacked, {**FAMILY_WEIGHTS, "binary": 6, "inplace": 3, "view": 3}),
    (_cropped_twice, {**FAMILY_WEIGHTS, "matrix": 60}),
    # an in-place write into an unfold with gaps (the overlap analysis lets it be written)
    (_gapped_unfold, {**FAMILY_WEIGHTS, "inplace": 30}),
    (_uint8_any_all, {**FAMILY_WEIGHTS, "pointwise": 4, "binary": 4}),
    (lambda draft, name, a: a.dtype == "uint8", {**FAMILY_WEIGHTS, "reduction": 3}),  # then OP_AFFINITY
    # conjunctions of common parts, each under 0.1% of the programs it applies to (docs/generator.md):
    # a backward program's clone or view written in place (eager allows it: autograd saved nothing of it)
    (_writable_clone_or_view, {**FAMILY_WEIGHTS, "inplace": 12}),
    # eval-mode normalisation, then a crop (ops/pads.py), then a matrix product (_cropped_twice)
    (_eval_norm_2d, {**FAMILY_WEIGHTS, "pad": 40}),
    # a size-changing view(dtype) of a value computed from an input after a write to it
    (_int_from_written_input, {**FAMILY_WEIGHTS, "shape": 12}),
    # a reflect or replicate pad of a permuted 4-d value (ops/pads.py draws the mode); for one that is a
    # pointwise result, index_select or gather as below
    (_permuted_4d, {**FAMILY_WEIGHTS, "pad": 10, "index": 4}),
    # index_select or gather of a pointwise result over a permuted view
    (_pointwise_over_permuted, {**FAMILY_WEIGHTS, "index": 12}),
    # a view of an alias pair's member after a write to its base
    (_alias_after_base_write, {**FAMILY_WEIGHTS, "view": 30}),
    # a write to a member of an alias pair (then the other read: _pulled)
    (_unwritten_alias_member, {**FAMILY_WEIGHTS, "inplace": 4}),
    # a computed float value that mm or bmm take: pads, which crop it at times (ops/pads.py), then a matrix op
    # a bool first operand of a binary op, the second a number: the result promotes
    (lambda draft, name, a: a.dtype == "bool" and a.rank >= 1, {**FAMILY_WEIGHTS, "binary": 3}),
    (lambda draft, name, a: not a.is_input and a.rank in (2, 3) and D.is_floating(a.dtype),
     {**FAMILY_WEIGHTS, "pad": 8}),
)
# Ops drawn more often within their family where an AFFINITY entry holds (keyed by the entry's test).
AFFINITY_OPS = {_int_from_written_input: {"view_dtype": 4}, _pointwise_over_permuted: {"index_select": 4, "gather": 4},
                _permuted_4d: {"index_select": 4, "gather": 4}}


def _affinity(draft, name, a) -> tuple:
    """(family weights, op weights) of the first AFFINITY entry that holds for first operand `name`."""
    for holds, w in AFFINITY:
        if holds(draft, name, a):
            return w, AFFINITY_OPS.get(holds, {})
    return FAMILY_WEIGHTS, {}


# Ops drawn more often (within their family) for an operand of a given dtype: any/all of uint8 return uint8,
# and arithmetic on them was never drawn when any/all met a uint8 value in 1 program of 3000.
OP_AFFINITY = {"uint8": {"any": 6, "all": 6}}


def _pulled(draft) -> str | None:
    """A value the next op should read first, at times: the latest value when
    one of _PULLED holds for it (an exact unbacked size, a two-dim crop,
    any/all of uint8, and the rarer conjunctions: the affinities above act only on a first
    operand, and the next op read another value most of the time), or, right
    after an in-place write to an input, the other input that shares its
    storage (an aliased write-then-read), else that input."""
    if not draft.values:
        return None
    last = draft.values[-1]
    a = draft.env[last]
    if any(holds(draft, last, a) for holds in _PULLED):
        return last
    call = draft.made[last]
    if OPS[call.op].mutates and call.args[0] in draft.inputs_names:
        root = draft.env[call.args[0]].root
        partners = [n for n in draft.inputs_names if n != call.args[0] and draft.env[n].root == root]
        # else the written input itself (so a value computed from it may be viewed as another dtype)
        return partners[0] if partners else call.args[0]
    return None


# The latest values _pulled returns (the affinities above that act on them).
_PULLED = (_cropped_twice, _uint8_any_all, _exact_unbacked, _writable_clone_or_view, _eval_norm_2d,
           _int_from_written_input, _pointwise_over_permuted, _gapped_unfold)

# Whether the next op reads _pulled's value first (False first: shrinks to the ordinary draw).
_PULL = (False, True, True, True)


def _op_choices(specs, a, more: dict | None = None) -> list:
    extra = {**OP_AFFINITY.get(a.dtype, {}), **(more or {})}
    if not extra:
        return specs
    return [o for o in dict.fromkeys(specs) for _ in range(specs.count(o) * extra.get(o.name, 1))]


# Whether a second or third operand is a fresh input when a value would fit too.
_FRESH = (False, False, True)


def op_menus(families, ops, device: str) -> tuple:
    """(menu, grad_menu): family -> the op specs drawn from it (each OP_WEIGHTS times), of `families` (in
    FAMILIES order), limited to `ops` when given and to ops eager runs on `device`; grad_menu keeps the
    differentiable ones (backward programs). An op eager refuses on purpose (CONTRACT_OPS) only when `ops`
    names it: otherwise programs() appends it to its share of programs."""
    from fuzz.devices import device_type

    here = device_type(device)
    menu = {f: [o for o in OPS.family(f) if (ops is None or o.name in ops) and o.runs_on(here)
                and (o.name not in CONTRACT_OPS or ops is not None)
                for _ in range(OP_WEIGHTS.get(o.name, 1))] for f in FAMILIES if f in families}
    return menu, {f: [o for o in specs if in_backward(o)] for f, specs in menu.items()}


# Ops eager does not differentiate whose results need no gradient (a tensor filled with a value read from
# the data; integer results): a backward program may hold them, else item()-valued fills were never in one.
_UNDIFFERENTIATED_OK = ("item_full", "item_pad", "mm_int", "bmm_int", "matmul_int")


def in_backward(spec) -> bool:
    """Whether a backward program may hold an op of `spec`."""
    return spec.grad or spec.name in _UNDIFFERENTIATED_OK


def takes_inductor_options(backend: str) -> bool:
    from fuzz.judge.backends import BackendError, backend as row

    try:
        return row(backend).inductor
    except BackendError:  # judged later, and reported there
        return False


class GenerationBug(AssertionError):
    """A strategy drew params its own op declaration rejects."""


def programs(*, backend: str = "inductor", device: str = "cpu", min_ops: int = 1, max_ops: int = 6,
             max_inputs: int = 3, max_rank: int = 5, families=FAMILIES, dtypes=D.ALL,
             modes=(None,), dynamic_flags=(None, True, False), max_symbols: int = 3,
             ops=None, options_menu: dict | None = None, backward_every: int | None = 4,
             layouts=LAYOUTS, marks=MARKS, dynamo_flags=tuple(DYNAMO), aliasing: bool = True,
             fullgraph_draws=(False, False, True)) -> st.SearchStrategy:
    """Programs valid for every call of their size schedule.

    `modes` and `options_menu` (see strategies/settings.py) sample
    torch.compile modes and Inductor flags.

    Shrinks towards: fewer ops, one input of rank 1, float32, contiguous,
    sizes 1, static dims, `dynamic=None`, 3 calls, the pointwise family
    (pointwise, binary, pads, views, reductions, cat, in-place), and
    each op reading the most recent value."""
    check_range("min_ops", min_ops, "max_ops", max_ops)
    if backward_every is None:
        backward_draws = (False,)
    else:
        check_range("backward_every", 1, "backward_every", backward_every, floor=1)
        # gradients too in one draw of backward_every (BACKWARD_EVERY prices it by device);
        # never first, so a program shrinks to forward only
        backward_draws = (False,) * (backward_every - 1) + (True,)
    check_range("max_inputs", 1, "max_inputs", max_inputs, floor=1)
    check_range("max_symbols", 1, "max_symbols", max_symbols, floor=1)
    check_range("max_rank", 0, "max_rank", max_rank)
    if max_rank > MAX_RANK:
        from hypothesis.errors import InvalidArgument

        raise InvalidArgument(f"max_rank={max_rank} exceeds the limit of {MAX_RANK} (fuzz/program/ir.py)")
    from hypothesis.errors import InvalidArgument

    fams = [f for f in FAMILIES if f in families]
    if not fams:
        raise InvalidArgument(f"families={families!r} has none of {FAMILIES}")
    unknown = set(ops or ()) - {o.name for o in OPS}
    if unknown:
        raise InvalidArgument(f"unknown ops {sorted(unknown)}; see `shapefuzz ops`")
    menu, grad_menu = op_menus(fams, ops, device)
    # programs eager refuses on purpose: where the whole menu is drawn, or the op is asked for by name
    contract_ok = "eager_rejects" in ops if ops else "pointwise" in fams
    if ops and not any(menu.values()):
        from fuzz.devices import device_type

        raise InvalidArgument(f"none of the ops {sorted(ops)} runs on {device_type(device)} in eager "
                              "(`shapefuzz ops`)")

    @st.composite
    def draw(d):
        # Draw the most symbols and calls, then use a prefix: the draws do not
        # shift when the count shrinks, so shrinking stays stable.
        calls = d(st.sampled_from(CALL_CHOICES))
        drawn = d(size_schedules(calls=max(CALL_CHOICES), symbols=max_symbols))
        sizes = {k: v[:calls] for k, v in drawn.items()}
        n_inputs = d(st.integers(1, max_inputs))
        inputs = [d(tensor_inputs(sizes, name=f"x{i}", dtypes=dtypes, max_rank=max_rank, layouts=layouts))
                  for i in range(n_inputs)]
        # A backward case: drawn before the ops, which it limits to differentiable ones that write no input.
        backward = d(st.sampled_from(backward_draws))
        alias = d(aliases(inputs, sizes, calls, name=f"x{n_inputs}")) if aliasing else None
        if alias is not None:
            inputs.append(alias)
        draft = _Draft(sizes, inputs, layouts, dtypes)
        draft.backward = backward
        calls_, used = [], set()
        while len(calls_) < max_ops:
            # One span per op, its continue-coin included: the shrinker deletes an op whole.
            must = len(calls_) < min_ops
            call = d(_op_or_stop(draft, grad_menu if backward else menu, f"v{len(calls_)}",
                                 must=must, backward=backward))
            if call is None:
                from hypothesis import assume

                # nothing drawn so far suits the menu (a narrow `ops=`): not a program of min_ops ops
                assume(not must)
                break
            spec = OPS[call.op]
            args = [draft.env[a] for a in call.args]
            result = spec.infer(args, call.params, call.out)
            if over_limits(result):  # past the resource limits a loaded case is held to: end here
                from hypothesis import assume

                assume(len(calls_) >= min_ops)
                break
            draft.guarded |= spec.guards(args, call.params)
            draft.env[call.out] = result
            if spec.mutates:
                after_write(draft.env, args[0].root)
            used.update(call.args)
            draft.values.append(call.out)
            draft.made[call.out] = call
            calls_.append(call)
        contract = _contract_call(d, draft, calls_, max_ops) if contract_ok else None
        if contract is not None:
            used.update(contract.args)
            calls_.append(contract)
        order, guarded = draft.inputs_names + draft.values, draft.guarded
        outputs = [c.out for c in calls_ if c.out not in used] or [order[-1]]
        by_symbol = d(symbol_marks(sorted(sizes), guarded=frozenset(guarded), marks=marks))
        for x in inputs:
            x.marks = d(dynamic_markings(x.shape, by_symbol=by_symbol, marks=marks))
        data_dependent = any(OPS[c.op].family == "data" for c in calls_)
        settings = RunSettings(backend=backend, device=device, dynamic=d(st.sampled_from(dynamic_flags)),
                               mode=d(mode_draws(modes)),
                               options=d(compile_options(options_menu)) if takes_inductor_options(backend) else {},
                               fullgraph=d(st.sampled_from(fullgraph_draws)), backward=backward,
                               dynamo=d(dynamo_settings(data_dependent=data_dependent, flags=dynamo_flags)))
        for x in inputs:
            x.mark_negative, x.mark_range = d(mark_styles(x, sizes))
        # Used symbols are renamed s0, s1, ... in order of first use, so a
        # repro's first dynamic dim reads s0 whichever symbol was drawn; unused
        # ones go, but one stays: its list length is the schedule's.
        used = list(dict.fromkeys(dim for x in inputs for dim in x.shape if isinstance(dim, str))) or [next(iter(sizes))]
        rename = {old: f"s{i}" for i, old in enumerate(used)}
        for x in inputs:
            x.shape = [rename.get(dim, dim) for dim in x.shape]
        sizes = {rename[k]: sizes[k] for k in used}
        return Program(sizes=sizes, inputs=inputs, ops=calls_, outputs=outputs, settings=settings,
                       seed=d(st.integers(0, 2**16)))

    return draw()


def _contract_call(d, draft, calls_: list, max_ops: int):
    """In one forward program of len(CONTRACT_DRAWS), an eager_rejects op reading the latest value (the
    program's last op then): eager raises there at every call, and the compiled function must raise as it
    does. None otherwise, and where the program holds max_ops ops already (the coin is drawn all the same,
    so the draws after it do not move)."""
    if draft.backward or not d(st.sampled_from(CONTRACT_DRAWS)) or len(calls_) >= max_ops:
        return None
    spec = OPS["eager_rejects"]
    last = (draft.values or draft.inputs_names)[-1]
    call = OpCall(op=spec.name, args=[last], params=d(spec.params([draft.env[last]])), out=f"v{len(calls_)}")
    draft.env[call.out] = spec.infer([draft.env[last]], call.params, call.out)
    draft.values.append(call.out)
    draft.made[call.out] = call
    return call


class _Draft:
    """A program being drawn: its sizes, inputs and values so far. Ops may add
    inputs (a fresh operand that fits, see OpSpec.operand) and size symbols."""

    def __init__(self, sizes: dict, inputs: list, layouts=LAYOUTS, dtypes=D.ALL):
        self.sizes, self.inputs, self.layouts, self.dtypes = sizes, inputs, layouts, dtypes
        proto = Program(sizes=sizes, inputs=inputs, ops=[], outputs=[])
        self.env = {}
        for x in inputs:
            self.env[x.name] = input_info(proto, x, self.env)
        self.inputs_names = [x.name for x in inputs]
        self.values: list = []  # op results, in order
        self.made: dict = {}  # op result -> the OpCall that made it
        self.guarded: set = set()
        self.backward = False  # a backward program (its first operands' affinities differ)

    def add_input(self, d, shape, dtype: str) -> str:
        """A new input of `shape` (Dims, each a literal or a size symbol)."""
        dims = [dim.const if dim.is_literal else dim.base for dim in shape]
        name = f"x{len(self.inputs)}"
        x = d(input_like(name, dims, dtype, layouts=self.layouts))
        self.inputs.append(x)
        self.env[name] = input_info(Program(sizes=self.sizes, inputs=self.inputs, ops=[], outputs=[]), x)
        self.inputs_names.append(name)
        return name


def _draw_ref(d, draft, ok=lambda name: True):
    """An operand: a computed value counted back from the latest (the simple
    case: a chain), or an input by its own index. Both indices are drawn every
    time, so deleting an op while shrinking leaves the other ops' references
    pointing where they did. None if nothing drawn so far is `ok`."""
    inputs, values = draft.inputs_names, draft.values[::-1]
    from_input = d(st.booleans())
    at_value = d(st.integers(0, max(len(values) - 1, 0)))
    at_input = d(st.integers(0, len(inputs) - 1))
    first, second = (inputs[at_input:] + inputs[:at_input], values[at_value:] + values[:at_value])
    for name in (first + second if from_input or not values else second + first):
        if ok(name):
            return name
    return None


def _draw_usable(d, items, ok):
    """An item of the fixed list `items`, walking on (cyclically) to the next
    `ok` one: indices mean the same whatever is usable here, so the choice
    survives shrinking elsewhere in the program."""
    at = d(st.integers(0, len(items) - 1))
    return next((x for x in items[at:] + items[:at] if ok(x)), None)


@st.composite
def _op_or_stop(d, draft, menu, out, must, backward=False):
    # drawn even when `must`, so every op's span has one shape
    more = d(st.sampled_from(_MORE if _pulled(draft) is None else _MORE_AFTER_PULL))
    return _draw_op(d, draft, menu, out, backward) if more or must else None


# A fresh second operand of a binary op that promotes bool is bool this often
# (True last: shrinks to the first operand's dtype). Otherwise a bool operand
# needs a bool value drawn first; then ldexp and friends took one in 0.7% of
# the programs with a bool value (scripts/reach.py, seed 0).
_FRESH_BOOL = (False, False, False, True)


def _fresh_dtype(d, spec, args, dtypes=D.ALL) -> str:
    """The dtype of a fresh operand: the first operand's, or bool for an op that
    promotes it (where `dtypes`, the program's menu, has bool)."""
    dt = args[0].dtype
    if spec.family == "binary" and spec.arity == 2 and dt != "bool" and "bool" in spec.dtypes and "bool" in dtypes \
            and d(st.sampled_from(_FRESH_BOOL)):
        return "bool"
    return dt


# Families whose ops keep neither result nor inputs' storage for backward in a way a later write of their
# result breaks: eager's autograd refused `cumprod(x).relu_()` ("modified by an inplace operation"). clone
# keeps nothing either.
_WRITABLE_AFTER = ("binary", "pad", "cat")
# Views a write goes through to such a value (autograd rebases the view's history; a view saves nothing).
# Not split/unbind/chunk (eager refuses writes to one of several views an op returns) nor as_strided.
_WRITABLE_VIEWS = ("slice", "narrow", "transpose", "permute", "unsqueeze", "squeeze", "flatten", "reshape")


def _keeps_nothing(call) -> bool:
    return OPS[call.op].family in _WRITABLE_AFTER or call.op == "clone"


def writable_in_backward(made: dict, name: str, a, env: dict | None = None) -> bool:
    """Whether a backward program may write value `name` (ValueInfo `a`) in place, `made` being the ops
    before the write (result -> OpCall): a value made by an op that keeps nothing of it, which no op read;
    with `env` (name -> ValueInfo), also a view of such a value (by _WRITABLE_VIEWS) where no op but such
    views read its storage."""
    call = made.get(name)
    if call is None:
        return False
    if a.root == name:
        return _keeps_nothing(call) and not any(name in c.args for c in made.values())
    base = made.get(a.root)
    if env is None or call.op not in _WRITABLE_VIEWS or base is None or not _keeps_nothing(base):
        return False
    return all(c.op in _WRITABLE_VIEWS for c in made.values() if any(env[x].root == a.root for x in c.args))


def _draw_op(d, draft, menu, out, backward=False, pull=_PULL):
    """An OpCall reading values of draft; its first operand _pulled's value where a draw from `pull` says so."""
    env = draft.env
    values = [env[n] for n in draft.inputs_names + draft.values]

    def usable_for(name):
        a = env[name]
        # an input that requires grad (or a view of it) cannot be written in place, nor a value autograd may
        # have saved: one an earlier op read, one an op of another family made (cumprod, exp, relu... keep
        # their result for backward), or a view (its base may be either)
        writable = not backward or writable_in_backward(draft.made, name, a, env)
        return {f: [o for o in specs if o.applicable(a, values) and (writable or not o.mutates)]
                for f, specs in menu.items()}

    # The first operand walks on to one some op of the menu takes: with a narrow
    # menu (`ops=["mm"]`) the drawn value often suits none. With the full menu
    # the first candidate always suits, so the draws are as before.
    pulled = _pulled(draft)
    if pulled is not None and any(usable_for(pulled).values()) and d(st.sampled_from(pull)):
        a_name = pulled
    else:
        a_name = _draw_ref(d, draft, ok=lambda n: any(usable_for(n).values()))
    if a_name is None:
        return None
    a, usable = env[a_name], usable_for(a_name)
    weights, op_weights = _affinity(draft, a_name, a)
    fam = _draw_usable(d, [f for f in menu for _ in range(weights.get(f, 1))], lambda f: bool(usable[f]))
    spec = _draw_usable(d, _op_choices(menu[fam], a, op_weights), lambda o: o in usable[fam])
    names, args = [a_name], [a]
    while len(names) < spec.arity:
        fresh = spec.fresh_info(args)
        # A fresh input even when a value fits, at times (False first: shrinks to reusing values).
        want_fresh = d(st.sampled_from(_FRESH))
        name = None if (want_fresh and fresh) else _draw_ref(d, draft, ok=lambda n: spec.fits(args, env[n]))
        if name is None:
            name = draft.add_input(d, spec.operand(args), _fresh_dtype(d, spec, args, draft.dtypes))
        names.append(name)
        args.append(env[name])
    params = d(spec.params(args))
    if backward and spec.grad_params:
        params = spec.grad_params(params)
    reason = spec.check(args, params)
    if reason:
        raise GenerationBug(f"{spec.name} drew invalid params {params}: {reason}")
    return OpCall(op=spec.name, args=names, params=params, out=out)


def pointwise_chains(*, min_ops: int = 1, max_ops: int = 6, **kw) -> st.SearchStrategy:
    """Programs made only of pointwise ops (unary, scalar, casts, and binary
    with broadcasting). Shrinks like `programs`."""
    return programs(min_ops=min_ops, max_ops=max_ops, families=("pointwise", "binary"), **kw)


def views(*, min_ops: int = 1, max_ops: int = 4, **kw) -> st.SearchStrategy:
    """Programs made of views (slice, narrow, transpose, permute, expand,
    unsqueeze/squeeze, flatten/reshape, as_strided on inputs) with pointwise
    ops between them. Shrinks like `programs`."""
    return programs(min_ops=min_ops, max_ops=max_ops, families=("pointwise", "view"), **kw)
