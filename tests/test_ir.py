import json

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz.program.ir import SCHEMA_VERSION, Program, ProgramError
from fuzz.program.typecheck import typecheck
from strategies import programs

from helpers import program


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_json_round_trip(p):
    text = p.to_json()
    q = Program.from_json(text)
    assert q == p
    assert q.to_json() == text
    typecheck(q)


def test_schema_version_is_rejected():
    d = program([("relu", ["x0"], {})]).to_dict()
    d["schema"] = SCHEMA_VERSION + 1
    with pytest.raises(ProgramError, match="schema version"):
        Program.from_dict(d)


@pytest.mark.parametrize("mutate,match", [
    (lambda d: d.pop("inputs"), "missing field 'inputs'"),
    (lambda d: d["sizes"].update(s0=[1, -2, 3]), r"sizes.s0\[1\]: must be >= 0"),
    (lambda d: d["sizes"].update(s1=[1]), "one value per call"),
    (lambda d: d["inputs"][0].update(colour="red"), r"inputs\[0\].colour: unknown field"),
    (lambda d: d["ops"][0].update(op="frobnicate"), "unknown op 'frobnicate'"),
    (lambda d: d["ops"][0].update(args=["x9"]), "undefined value 'x9'"),
    (lambda d: d["inputs"][0].update(dtype="float8"), r"inputs\[0\].dtype: must be one of"),
    (lambda d: d["ops"][0].update(op="pad", params={"mode": "reflect", "pad": [1, 0]}), "does not take a rank-1"),
    (lambda d: (d["inputs"][0].update(shape=[2, "s0"]),
                d["ops"][0].update(op="pad", params={"mode": "reflect", "pad": [3, 0]})), "reflect pad width"),
    (lambda d: d["ops"][0].update(op="pad", params={"mode": "constant", "pad": [-4, 0]}), "crops"),
    (lambda d: d["ops"][0].update(op="amax", params={"dim": 7}), "out of range"),
    (lambda d: d.update(outputs=["nope"]), "output 'nope'"),
])
def test_malformed_programs_name_the_problem(mutate, match):
    d = program([("relu", ["x0"], {})]).to_dict()
    mutate(d)
    with pytest.raises(ProgramError, match=match):
        typecheck(Program.from_dict(json.loads(json.dumps(d))))


def test_not_json():
    with pytest.raises(ProgramError, match="not valid JSON"):
        Program.from_json("{nope")


def test_an_exact_unbacked_size_broadcasts_where_its_values_allow_and_a_lower_bound_never_does():
    """mask_keep's size is data-dependent to the compiler but known to the generator: it may meet a size equal
    to it at every call, or broadcast as a 1 against any size (eager does; the compiler assumes it does not, by
    design, and asserts at run time: the judge calls that expected); a size known only from below (nonzero's)
    may meet nothing but its own key."""
    from fuzz.program.ops.data_dependent import exact, unknown
    from fuzz.program.symbolic import Dim, broadcast_shape, broadcastable, broadcasts_to, unbacked_one_meets

    s0, s1 = Dim.symbol("s0", (3, 5, 7)), Dim.symbol("s1", (3, 5, 8))
    u, one, low = exact("v1", (3, 5, 7)), exact("v2", (1, 1, 1)), unknown("v3", 3)
    assert broadcastable((u,), (s0,)) and broadcast_shape((u,), (s0,)) == (s0,) == broadcast_shape((s0,), (u,))
    assert not broadcastable((u,), (s1,))
    assert broadcastable((one,), (s1,)) and broadcastable((one,), (Dim.literal(1, 3),))
    assert broadcast_shape((one,), (s1,)) == (s1,) == broadcast_shape((s1,), (one,))
    assert broadcasts_to((one,), (s1,)) and not broadcasts_to((s1,), (one,))
    assert broadcasts_to((u,), (s0,)) and not broadcasts_to((u,), (s1,))
    # a 1 at some calls only is no broadcast the compiler can get right or assert: not drawn
    assert not broadcastable((exact("v5", (1, 0, 1)),), (s1,))
    assert unbacked_one_meets((one, s0), (s1, s0)) and not unbacked_one_meets((one,), (Dim.literal(1, 3),))
    assert not unbacked_one_meets((u,), (s0,))
    assert not broadcastable((exact("v4", (0, 0, 0)),), (low,))
    assert u.is_data_dependent and not u.is_bound_only and low.is_bound_only and not low.is_exact_unbacked
