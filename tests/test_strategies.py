"""Generation: validity in eager, coverage of the op set, shrink quality."""

import collections
import itertools

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis.errors import InvalidArgument

from fuzz.program.interp import load
from fuzz.program import dtypes as D
from fuzz.program.ir import MARKS
from fuzz.program.layouts import LAYOUTS
from fuzz.program.opdb import OPS, PAD_MODES
from fuzz.program.typecheck import typecheck

from helpers import draw_programs
from strategies import dynamic_markings, pad_specs, pointwise_chains, programs, shapes, size_schedules, views

N = 400


@pytest.fixture(scope="module")
def blind_draws():
    """N blind draws, drawn once: module-scoped, so the tests reading them run in one pytest-xdist worker
    (tests/conftest.py groups them), which draws the 400 programs (10-15 CPU-s) once."""
    return draw_programs(N, seed=11)


def test_eager_accepts_generated_programs(blind_draws):
    """Programs are valid by construction: eager runs >= 97% of them at every call,
    and each output has the dtype and rank the generator inferred for it (a value
    typed wrongly is drawn into the ops of the wrong type: torch.any of uint8 is uint8)."""
    # not those that end in an op eager refuses on purpose (strategies/programs.py CONTRACT_DRAWS)
    progs = [p for p in blind_draws if not any(c.op == "eager_rejects" for c in p.ops)]
    failures, mistyped = [], []
    for p in progs:
        info = typecheck(p)
        prog = load(p)
        for call in range(p.calls):
            try:
                out = prog.program(*prog.make_inputs(call))
                prog.program(*prog.make_inputs(call, fp64=True))
            except Exception as e:  # noqa: BLE001
                failures.append((p.to_json(), repr(e)))
                break
            got = [(str(t.dtype).removeprefix("torch."), t.dim()) for t in out]
            want = [(info[name].dtype, info[name].rank) for name in p.outputs]
            if got != want:
                mistyped.append((p.to_json(), got, want))
                break
    rate = 1 - len(failures) / len(progs)
    print(f"eager acceptance {rate:.4f} over {len(progs)} programs")
    assert rate >= 0.97, failures[:3]
    assert not mistyped, mistyped[:2]


def test_any_and_all_of_uint8_are_uint8_as_in_eager():
    import torch

    from helpers import program

    for op in ("any", "all"):
        for params in ({"dim": None, "keepdim": False}, {"dim": -1, "keepdim": True}):
            p = program([(op, ["x0"], params)], dtype="uint8")
            prog = load(p)
            out = prog.program(*prog.make_inputs(0))[0]
            assert typecheck(p)["v0"].dtype == str(out.dtype).removeprefix("torch.") == "uint8"
            assert getattr(torch, op)(torch.ones(2, dtype=torch.int8)).dtype == torch.bool  # other ints: bool


def test_binary_ops_type_bool_operands_as_eager_does():
    """Every binary op that takes a bool operand gives, in eager, the dtype the
    generator infers, over bool against each dtype in both orders (ldexp and
    friends promote bool; sub refuses it and does not take it), either operand
    0-d or not (a 0-d operand counts only where its category is higher)."""
    from fuzz.program.ir import TensorInput

    from helpers import program

    takers = sorted(o.name for o in OPS if o.family == "binary" and o.arity == 2 and "bool" in (o.dtypes or ()))
    assert {"ldexp", "copysign", "floor_divide", "remainder", "fmod", "where", "masked_fill"} <= set(takers)
    assert "sub" not in takers
    checked = 0
    for name in takers:
        for (x, y), (sx, sy) in itertools.product(
                [("bool", d) for d in D.ALL] + [(d, "bool") for d in D.ALL if d != "bool"],
                [(["s0"], ["s0"]), ([], ["s0"]), (["s0"], [])]):
            if x not in OPS[name].dtypes or y not in OPS[name].dtypes:
                continue
            p = program([(name, ["x0", "x1"], {})], inputs=[TensorInput(name="x0", shape=sx, dtype=x),
                                                           TensorInput(name="x1", shape=sy, dtype=y)])
            try:
                want = typecheck(p)["v0"].dtype
            except Exception:  # noqa: BLE001 - a pair the op refuses (pair_ok): not drawn
                continue
            prog = load(p)
            out = prog.program(*prog.make_inputs(0))[0]
            assert str(out.dtype).removeprefix("torch.") == want, (name, x, y, sx, sy)
            checked += 1
    assert checked > 300, checked


def test_integer_matrix_products_are_typed_as_eager_and_kept_off_cuda():
    from fuzz.program.ir import ProgramError, TensorInput

    from helpers import program

    shapes = {"mm_int": (["s0", 3], [3, 2]), "bmm_int": ([2, "s0", 3], [2, 3, 2]), "matmul_int": ([4, "s0", 3], [3, 2])}
    for op, (sa, sb) in shapes.items():
        for dtype in D.INTEGRAL:
            p = program([(op, ["x0", "x1"], {})], inputs=[TensorInput(name="x0", shape=sa, dtype=dtype),
                                                          TensorInput(name="x1", shape=sb, dtype=dtype)])
            prog = load(p)
            out = prog.program(*prog.make_inputs(0))[0]
            info = typecheck(p)["v0"]
            assert (str(out.dtype).removeprefix("torch."), out.dim()) == (info.dtype, info.rank), (op, dtype)
            p.settings.device = "cuda"  # eager has no CUDA kernel for it: a CUDA program may not hold it
            with pytest.raises(ProgramError, match="cpu only"):
                typecheck(p)
    cuda = draw_programs(60, seed=3, device="cuda", families=("matrix",))
    assert not [o.op for p in cuda for o in p.ops if o.op.endswith("_int")]
    assert [o.op for p in draw_programs(60, seed=3, families=("matrix",)) for o in p.ops if o.op.endswith("_int")]


@pytest.mark.parametrize("name", ["view_dtype", "reshape_lit", "squeeze_dynamic", "mask_keep", "item_clamp",
                                  "item_full", "item_pad", "as_strided_free", "item_clamp_by", "item_full_by"])
def test_reach_ops_run_in_eager_as_typed(name):
    """The ops added to widen the generator's reach, drawn among ops that make strided, narrowed and 0-d values
    (and broadcast them): eager runs each program at every call, and each output has the shape and dtype the
    generator inferred at that call; a size known only from below (item_pad's) is at least its bound. An
    as_strided_free past the storage (on purpose) raises at every call, whatever storage its value's view has."""
    # as_strided_free takes values with an element at every call: more programs for enough of it; reshape_lit
    # was 5 in 60 (3 once the pulls towards rare conjunctions came): 80
    # item_clamp_by: 90, for a backward program among them (none in 60 once sum took dtype=)
    progs = draw_programs(200 if name == "as_strided_free" else 80 if name == "reshape_lit"
                          else 90 if name == "item_clamp_by" else 60, seed=3,
                          ops=[name, "add", "transpose", "narrow", "sum"], max_ops=4)
    if name in ("squeeze_dynamic", "reshape_lit"):  # of data-dependent sizes too
        # reshape_lit: 80, for a (1,) of a count that is 1 at every call (0 in 40 once conjunctions were pulled)
        progs += draw_programs(80 if name == "reshape_lit" else 40, seed=3, ops=[name, "mask_keep", "nonzero"],
                               max_ops=3)
    drawn = [o.params for p in progs for o in p.ops if o.op == name]
    assert len(drawn) >= 5, len(drawn)
    for p in progs:
        info, prog = typecheck(p), load(p)
        if any(o.op == "as_strided_free" and o.params["way"] == "oob" for o in p.ops):
            for call in range(p.calls):
                with pytest.raises(RuntimeError, match="out of bounds for storage"):
                    prog.program(*prog.make_inputs(call))
            continue
        for call in range(p.calls):
            out = prog.program(*prog.make_inputs(call))
            assert [str(t.dtype).removeprefix("torch.") for t in out] == [info[n].dtype for n in p.outputs]
            for n, t in zip(p.outputs, out):
                dims = info[n].shape
                assert len(t.shape) == len(dims) and all(
                    v >= d.values[call] if d.is_bound_only else v == d.values[call] for d, v in zip(dims, t.shape)), \
                    p.to_json()
    if name == "mask_keep":  # its exact size broadcasts against another size (not itself), as a 1 too
        from fuzz.program.symbolic import unbacked_one_meets

        def meets_another(p, o):
            x, y = (typecheck(p)[a].shape for a in o.args)
            return any((dx.is_exact_unbacked or dy.is_exact_unbacked) and dx.key != dy.key
                       for dx, dy in zip(reversed(x), reversed(y)))
        assert any(o.op == "add" and meets_another(p, o) for p in progs for o in p.ops)
        assert any(o.op == "add" and unbacked_one_meets(*(typecheck(p)[a].shape for a in o.args))
                   for p in progs for o in p.ops)
    if name in ("squeeze_dynamic", "reshape_lit"):  # of a data-dependent size too
        assert any(o.op == name and any(d.is_data_dependent for d in typecheck(p)[o.args[0]].shape)
                   for p in progs for o in p.ops)
    if name == "reshape_lit":  # (-1, k), (-1, 1) and (1,)
        assert {2, 1} <= {d["k"] for d in drawn} and any(d.get("one") for d in drawn), drawn
    if name == "item_clamp_by":  # read from another tensor, in backward programs too
        assert any(p.settings.backward for p in progs if any(o.op == name for o in p.ops))
    if name == "as_strided_free":  # both valid ways (past the storage: one draw in 16, and tests/test_planted.py)
        assert {"window", "literal"} <= {d["way"] for d in drawn}, drawn
    if name == "view_dtype":  # every kind is drawn: the same size, smaller, larger, a float and back, kept
        sizes = {(p.get("back", False), D.ITEMSIZE[p["to"]]) for p in drawn}
        assert {True, False} <= {back for back, _ in sizes} and len(sizes) >= 4, sizes
        kept = [o for p in progs for o in p.ops if o.op == name and not o.params.get("back")
                and typecheck(p)[o.args[0]].dtype in D.FLOATING]
        assert kept and all(typecheck(p)[o.args[0]].bits_fixed for p in progs for o in p.ops if o in kept)


def test_a_float_viewed_as_an_integer_and_back_is_its_input_also_in_the_float64_reference():
    """The float64 reference run holds float64 where the program has float32: the view back reads the
    value's own dtype, so the reference is its input, not its bits read at the wrong size (which would
    excuse a compiler's real mismatch). A larger integer view never meets an empty last dim."""
    import torch

    from fuzz.program.ir import TensorInput
    from fuzz.program.ops.shape_ops import _view_dtype_targets
    from fuzz.program.symbolic import Dim, ValueInfo

    from helpers import program

    for to in ("int32", "int16", "uint8"):
        p = program([("view_dtype", ["x0"], {"to": to, "back": True})],
                    inputs=[TensorInput(name="x0", shape=["s0", 3], dtype="float32", layout="transposed")])
        prog = load(p)
        for fp64 in (False, True):
            x = prog.make_inputs(1, fp64=fp64)
            out = prog.program(*x)[0]
            assert out.dtype == x[0].dtype and torch.equal(out, x[0]), (to, fp64)
    empty_at_one = ValueInfo(shape=(Dim.literal(2, 3), Dim.symbol("s0", (4, 0, 8))), dtype="int8", root="x0", calls=3)
    assert not [t for t in _view_dtype_targets(empty_at_one) if D.ITEMSIZE[t["to"]] > 1]


def test_a_float_kept_as_an_integer_reads_an_inputs_bits_also_in_the_float64_reference():
    """A float viewed as an integer and kept so is drawn only where its bits are an input's own
    (bits_fixed: views of it, no write before); the float64 reference reads the same integers as eager (its
    input narrowed back to the program's dtype), so it excuses no mismatch. A value an op wrote, or computed,
    is refused."""
    import torch

    from fuzz.program.ir import ProgramError, TensorInput

    from helpers import program

    x0 = TensorInput(name="x0", shape=["s0", 4], dtype="float32", layout="transposed")
    for to in ("int32", "int16", "uint8"):
        prog = load(program([("view_dtype", ["x0"], {"to": to})], inputs=[x0]))
        plain, ref = (prog.program(*prog.make_inputs(1, fp64=fp64))[0] for fp64 in (False, True))
        assert plain.dtype == getattr(torch, to) and torch.equal(plain, ref), to
    ok = program([("transpose", ["x0"], {"dims": [0, 1]}), ("view_dtype", ["v0"], {"to": "int16"})], inputs=[x0])
    assert typecheck(ok)["v1"].dtype == "int16"
    for first in [("add_scalar_", ["x0"], {"s": 1.0}), ("relu", ["x0"], {})]:
        with pytest.raises(ProgramError, match="view"):
            typecheck(program([first, ("view_dtype", ["x0" if first[0].endswith("_") else "v0"], {"to": "int16"})],
                              inputs=[x0]))


def test_every_op_mode_and_marking_appears_and_every_op_is_reachable(blind_draws):
    """Blind draws (the 400 programs the eager test runs) hold every family, marking, layout, dtype and
    `dynamic`; `shapefuzz run`'s default draws (pair-aimed) hold 95% of the ops in 200 programs, and each other
    op is drawn by programs() when the menu is just that op. (One test rather than one per op: pytest-xdist
    spread those over both workers, and each drew the programs. 800 blind programs for all of it, which held
    80% of the ops, were 74-89 s of CI; 200 pair-aimed ones held 172 of 173 ops.)"""
    from fuzz.campaign.generate import generate
    from strategies.aim import PairPrograms

    aimed = list(generate(PairPrograms(backend="inductor", device="cpu"), seed_=5, count=200))
    ops = collections.Counter(o.op for p in aimed for o in p.ops)
    unreachable = [name for name in (o.name for o in OPS) if name not in ops and not any(
        o.op == name for p in draw_programs(10, seed=1, ops=[name], max_ops=3) for o in p.ops)]
    assert not unreachable
    assert len(ops) >= 0.95 * len(OPS.ops)
    progs = blind_draws
    fams = collections.Counter(OPS[o.op].family for p in progs for o in p.ops)
    # pad modes from a pad-only menu: in the wide draws pad is one op of many, and a mode can miss all of them
    modes = collections.Counter(o.params["mode"] for p in draw_programs(100, seed=5, ops=["pad"], max_ops=2)
                                for o in p.ops if o.op == "pad")
    marks = collections.Counter(m for p in progs for x in p.inputs for m in x.marks)
    layouts = collections.Counter(x.layout for p in progs for x in p.inputs)
    dtypes = collections.Counter(x.dtype for p in progs for x in p.inputs)
    print("families", dict(fams), "\nmodes", dict(modes), "\nmarks", dict(marks), "\nops", dict(ops))
    assert set(fams) == {o.family for o in OPS}
    assert set(modes) == set(PAD_MODES)
    assert set(marks) == set(MARKS)
    assert set(layouts) == set(LAYOUTS) and len(dtypes) == len(D.ALL)
    assert {p.settings.dynamic for p in progs} == {None, True, False}
    assert all(p.calls >= 3 for p in progs + aimed)

S = settings(database=None, max_examples=3000, suppress_health_check=list(HealthCheck), derandomize=True,
             phases=[Phase.generate, Phase.shrink])  # no explain phase: it re-ran ~half the draws to annotate a failure


def minimal(strategy, condition):
    """hypothesis.find, made independent of the machine and the test process: without the
    literals Hypothesis harvests from local modules (they change with which of shapefuzz's
    modules the process imported first), and without Hypothesis's 300 s cap on shrinking,
    which a loaded 2-core CI machine reached (in-place-on-input came back with a rank-0 input)."""
    from unittest import mock

    from hypothesis.internal.conjecture import engine

    from fuzz.campaign.generate import no_local_constants

    with no_local_constants(), mock.patch.object(engine, "MAX_SHRINKING_SECONDS", 3600):
        return find(strategy, condition, settings=S)


# The exact-minimal searches draw from a menu of the op they look for and relu (the
# op every other one shrinks to): over the whole op set the in-place search took
# 256-377 s of CI for the same shrink order of inputs, sizes, marks and settings.
@pytest.mark.campaign
def test_shrinks_to_minimal_reflect_pad():
    p = minimal(programs(ops=("relu", "pad")), lambda p: any(o.op == "pad" and o.params["mode"] == "reflect" for o in p.ops))
    # Exact op and operand; sizes reach 1 except, at times, one value of 3 (the
    # reflect width options depend on the sizes, which limits Hypothesis here).
    assert [(o.op, o.params) for o in p.ops] == [("pad", {"mode": "reflect", "pad": [0, 0]})]
    (x,) = [x for x in p.inputs if x.name == p.ops[0].args[0]]
    assert len(x.shape) == 2 and (x.dtype, x.layout, x.marks) == ("float32", "contiguous", ["static", "static"])
    assert all(max(v) <= 3 and len(v) == 3 for v in p.sizes.values()) and set(x.shape) <= set(p.sizes) | {1}
    # Hypothesis cannot always drop an unused input drawn beside the operand (it would
    # have to lower the input count and re-point the operand in one step): at most one, of rank <= 1.
    others = [y for y in p.inputs if y is not x]
    assert len(others) <= 1 and all(len(y.shape) <= 1 and y.alias is None for y in others)
    assert p.settings.dynamic is None and not p.settings.backward and not p.settings.fullgraph


@pytest.mark.campaign
def test_shrinks_to_minimal_dynamic_marking():
    p = minimal(programs(ops=("relu", "add")), lambda p: any("dynamic" in x.marks for x in p.inputs))
    assert p.sizes == {"s0": [1, 1, 1]}
    assert [(x.shape, x.marks) for x in p.inputs] == [(["s0"], ["dynamic"])]
    assert [o.op for o in p.ops] == ["relu"]


@pytest.mark.campaign
def test_shrinks_to_minimal_inplace_on_input():
    p = minimal(programs(ops=("relu", "add", "add_")),
                lambda p: any(o.op == "add_" and o.args[0].startswith("x") for o in p.ops))
    # One op: add_ writes x0 and reads a second input (no shared storage with x0),
    # or, with one input, reads a computed value (the simplest being relu(x0)).
    assert [(o.op, o.args) for o in p.ops] in ([("add_", ["x0", "x1"])], [("relu", ["x0"]), ("add_", ["x0", "v0"])])
    assert [(x.shape, x.dtype, x.layout, x.alias) for x in p.inputs][:1] == [(["s0"], "float32", "contiguous", None)]
    assert all(x.alias is None and x.layout == "contiguous" for x in p.inputs) and len(p.inputs) <= 2
    assert p.sizes == {"s0": [1, 1, 1]}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(pointwise_chains())
def test_pointwise_chains_are_pointwise(p):
    assert all(OPS[o.op].family in ("pointwise", "binary") for o in p.ops)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(views())
def test_views_use_views_and_pointwise(p):
    assert all(OPS[o.op].family in ("pointwise", "view") for o in p.ops)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(pad_specs((2, 3, 5)))
def test_pad_specs_run_in_eager(spec):
    import torch
    import torch.nn.functional as F

    kw = {"value": spec["value"]} if "value" in spec else {}
    F.pad(torch.randn(2, 3, 5), tuple(spec["pad"]), mode=spec["mode"], **kw)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(size_schedules(calls=4, symbols=2).flatmap(lambda s: shapes(s, max_rank=3).map(lambda sh: (s, sh))))
def test_shapes_use_schedule_symbols(data):
    sizes, shape = data
    assert len(shape) <= 3
    assert all(d in sizes or d in (1, 2, 3, 4) for d in shape)
    assert all(len(v) == 4 for v in sizes.values())


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(dynamic_markings(["s0", 1, "s1", "s0"], guarded=frozenset({"s1"})))
def test_markings_respect_literals_guards_and_symbols(marks):
    assert marks[1] in ("static", "maybe_dynamic")
    assert marks[2] != "unbacked"
    assert marks[0] == marks[3]


def test_arguments_are_validated():
    with pytest.raises(InvalidArgument):
        programs(min_ops=5, max_ops=2)
    with pytest.raises(InvalidArgument):
        programs(families=("nonsense",))
    with pytest.raises(InvalidArgument):
        pad_specs((2, 3), modes=("mirror",))
    with pytest.raises(InvalidArgument):
        size_schedules(calls=0)


def test_a_narrow_menu_still_draws_programs_of_its_ops():
    """`ops=["mm"]`: the first operand walks to a value mm takes, and a draw
    with none is rejected rather than returned without ops."""
    progs = draw_programs(30, seed=3, ops=["mm"], max_ops=2)
    assert all(p.ops and {o.op for o in p.ops} == {"mm"} for p in progs)


def test_cuda_modes_and_flags_are_drawn_by_their_weights():
    """The default CUDA campaign draws every mode and flag, the default mode
    in most cases and max-autotune in few (strategies/settings.py prices them), each
    flag in about one case of four; a menu of one mode draws it alone."""
    from strategies.settings import OPTIONS_CUDA, MODES_CUDA

    progs = draw_programs(200, seed=3, device="cuda", modes=MODES_CUDA, options_menu=OPTIONS_CUDA)
    modes = collections.Counter(p.settings.mode for p in progs)
    assert set(modes) == set(MODES_CUDA), modes
    assert modes[None] > len(progs) / 2 and modes["max-autotune"] < len(progs) / 5, modes
    flags = collections.Counter(k for p in progs for k in p.settings.options)
    assert set(flags) == set(OPTIONS_CUDA), flags
    assert all(n < len(progs) / 3 for n in flags.values()), flags
    assert flags["coordinate_descent_tuning"] == min(flags.values()), flags
    assert {p.settings.mode for p in draw_programs(30, seed=3, modes=("max-autotune",))} == {"max-autotune"}


def test_backward_every_sets_how_often_a_case_runs_a_backward(monkeypatch):
    import strategies.settings as settings
    from fuzz.campaign.driver import CampaignConfig
    from fuzz.campaign.generate import generate

    assert all(p.settings.backward for p in draw_programs(20, backward_every=1))
    drawn = [p.settings.backward for p in draw_programs(60)]
    assert any(drawn) and not all(drawn)
    with pytest.raises(InvalidArgument, match="backward_every"):
        programs(backward_every=0)
    # a campaign's strategy takes the odds of its device type
    monkeypatch.setitem(settings.BACKWARD_EVERY, "cuda", 1)
    cfg = CampaignConfig(backend="inductor", device="cuda", seed=1)
    assert all(p.settings.backward for p in generate(cfg.kind().strategy(cfg), seed_=1, count=20, batch_size=20))
