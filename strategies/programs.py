"""Whole programs: inputs, a straight-line op sequence, markings, settings."""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz import dtypes as D
from fuzz.ir import OpCall, Program, RunSettings
from fuzz.opdb import OPS
from fuzz.opspec import FAMILIES
from fuzz.typecheck import input_info

from ._validate import check_range
from .markings import dynamic_markings, symbol_marks
from .settings import compile_options
from .shapes import size_schedules, tensor_inputs

CALL_CHOICES = (3, 4, 5)
# Continue-coin for the op list: False (stop) first so lists shrink shorter.
_MORE = (False, True, True, True)


class GenerationBug(AssertionError):
    """A strategy drew params its own op declaration rejects."""


def programs(*, backend: str = "inductor", device: str = "cpu", min_ops: int = 1, max_ops: int = 6,
             max_inputs: int = 3, max_rank: int = 5, families=FAMILIES, dtypes=D.ALL,
             modes=(None,), dynamic_flags=(None, True, False), max_symbols: int = 3,
             ops=None, options_menu: dict | None = None) -> st.SearchStrategy:
    """Programs valid for every call of their size schedule.

    `modes` and `options_menu` (see strategies/settings.py) sample
    torch.compile modes and Inductor flags.

    Shrinks towards: fewer ops, one input of rank 1, float32, contiguous,
    sizes 1, static dims, `dynamic=None`, 3 calls, the pointwise family
    (pointwise, binary, pads, views, reductions, cat, in-place), and
    each op reading the most recent value."""
    check_range("min_ops", min_ops, "max_ops", max_ops)
    check_range("max_inputs", 1, "max_inputs", max_inputs, floor=1)
    check_range("max_symbols", 1, "max_symbols", max_symbols, floor=1)
    from hypothesis.errors import InvalidArgument

    fams = [f for f in FAMILIES if f in families]
    if not fams:
        raise InvalidArgument(f"families={families!r} has none of {FAMILIES}")
    unknown = set(ops or ()) - {o.name for o in OPS}
    if unknown:
        raise InvalidArgument(f"unknown ops {sorted(unknown)}; see `shapefuzz ops`")
    menu = {f: [o for o in OPS.family(f) if ops is None or o.name in ops] for f in fams}

    @st.composite
    def draw(d):
        # Draw the most symbols and calls, then use a prefix: the draws do not
        # shift when the count shrinks, so shrinking stays stable.
        calls = d(st.sampled_from(CALL_CHOICES))
        drawn = d(size_schedules(calls=max(CALL_CHOICES), symbols=max_symbols))
        sizes = {k: v[:calls] for k, v in drawn.items()}
        n_inputs = d(st.integers(1, max_inputs))
        inputs = [d(tensor_inputs(sizes, name=f"x{i}", dtypes=dtypes, max_rank=max_rank)) for i in range(n_inputs)]
        proto = Program(sizes=sizes, inputs=inputs, ops=[], outputs=[])
        env = {x.name: input_info(proto, x) for x in inputs}
        order = [x.name for x in inputs]
        calls_, guarded, used = [], set(), set()
        while len(calls_) < max_ops and (len(calls_) < min_ops or d(st.sampled_from(_MORE))):
            call = _draw_op(d, env, order, menu, out=f"v{len(calls_)}")
            if call is None:
                break
            spec = OPS[call.op]
            args = [env[a] for a in call.args]
            guarded |= spec.guards(args, call.params)
            env[call.out] = spec.infer(args, call.params, call.out)
            used.update(call.args)
            order.append(call.out)
            calls_.append(call)
        outputs = [c.out for c in calls_ if c.out not in used] or [order[-1]]
        by_symbol = d(symbol_marks(sorted(sizes), guarded=frozenset(guarded)))
        for x in inputs:
            x.marks = d(dynamic_markings(x.shape, by_symbol=by_symbol))
        settings = RunSettings(backend=backend, device=device, dynamic=d(st.sampled_from(dynamic_flags)),
                               mode=d(st.sampled_from(modes)),
                               options=d(compile_options(options_menu)) if backend == "inductor" else {})
        used_syms = {dim for x in inputs for dim in x.shape if isinstance(dim, str)}
        # unused symbols go, but one stays: its list length is the schedule's
        sizes = {k: v for i, (k, v) in enumerate(sizes.items()) if k in used_syms or (i == 0 and not used_syms)}
        return Program(sizes=sizes, inputs=inputs, ops=calls_, outputs=outputs, settings=settings,
                       seed=d(st.integers(0, 2**16)))

    return draw()


def _draw_op(d, env, order, menu, out):
    values = [env[n] for n in order]
    # The first operand: 0 is the latest value, so chains are the simple case.
    back = d(st.integers(0, len(order) - 1))
    a_name = order[-1 - back]
    a = env[a_name]
    usable = {f: [o for o in specs if o.applicable(a, values)] for f, specs in menu.items()}
    usable = {f: v for f, v in usable.items() if v}
    if not usable:
        return None
    fam = d(st.sampled_from(list(usable)))
    spec = d(st.sampled_from(usable[fam]))
    names = [a_name]
    if spec.arity == 2:
        partners = [n for n in reversed(order) if spec.pair(a, env[n])]
        names.append(d(st.sampled_from(partners)))
    args = [env[n] for n in names]
    params = d(spec.params(args))
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
