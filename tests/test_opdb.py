"""The op database: declarations are checked when built, and every op renders."""

import pytest

from fuzz.program.opdb import OPS
from fuzz.program.opspec import OpSpec
from fuzz.program.symbolic import Dim, ValueInfo


def test_registry_has_the_required_op_set():
    fams = {f: {o.name for o in OPS.family(f)} for f in ("pointwise", "binary", "pad", "view", "reduction", "inplace",
                                                          "cat")}
    unary = [o for o in OPS.family("pointwise") if o.arity == 1]
    assert len(unary) >= 20
    assert {"add", "mul", "sub", "div", "maximum", "where"} <= fams["binary"]
    assert {"slice", "narrow", "transpose", "permute", "expand", "unsqueeze", "squeeze", "reshape", "flatten",
            "as_strided"} <= fams["view"]
    assert {"sum", "mean", "amax", "amin", "prod"} <= fams["reduction"]
    assert {"relu_", "add_", "mul_", "clamp_", "copy_", "slice_assign"} <= fams["inplace"]
    assert fams["pad"] == {"pad"} and fams["cat"] == {"cat"}


@pytest.mark.parametrize("kw,match", [
    (dict(family="nope"), "family"),
    (dict(arity=4), "arity"),
    (dict(arity=2), "pair"),
    (dict(mutates=True), "mutates"),
    (dict(name="not an identifier"), "identifier"),
])
def test_specs_are_checked_when_built(kw, match):
    base = dict(name="x", family="pointwise", arity=1, accepts=lambda a: True, params=None, check=None,
                infer=None, render=None)
    base.update(kw)
    with pytest.raises(ValueError, match=match):
        OpSpec(**base)


def test_duplicate_names_are_refused():
    with pytest.raises(ValueError, match="declared twice"):
        OPS.add(OPS["relu"])


def test_every_op_renders_on_a_rank3_float_input():
    """Drawing params needs Hypothesis; rendering is plain: each op whose
    params can be drawn renders to a Python expression naming its args."""
    from hypothesis import HealthCheck, given, settings

    a = ValueInfo(shape=(Dim.symbol("s0", (4, 5, 6)), Dim.literal(1, 3), Dim.literal(3, 3)), dtype="float32",
                  root="x0", calls=3, is_input=True)
    b = ValueInfo(shape=a.shape, dtype="float32", root="x1", calls=3, is_input=True)
    for spec in OPS:
        if not spec.applicable(a, [a, b]):
            continue
        args = [a]
        while len(args) < spec.arity:  # b where it fits, else the fresh input the generator would add
            args.append(b if spec.fits(args, b) else spec.fresh_info(args))

        @settings(max_examples=5, database=None, suppress_health_check=list(HealthCheck))
        @given(spec.params(args))
        def check(p):
            assert spec.check(args, p) is None
            r = spec.render(["x0", "x1", "x2"][: spec.arity], p, args)
            text = r if isinstance(r, str) else " ".join(r[0]) + r[1]
            assert "x0" in text
            spec.infer(args, p, "v0")

        check()
