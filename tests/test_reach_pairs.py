"""scripts/pairs.py (the measure of conjunctions): the pairs a program holds, and the feasibility
search that decides which pairs count."""

import pytest

from fuzz.program.ir import TensorInput
from helpers import program, script_module


@pytest.fixture(scope="module")
def pairs():
    return script_module("pairs")


def test_the_pairs_of_a_hand_made_program(pairs):
    inputs = [TensorInput(name="x0", shape=["s0", 3], layout="permuted", perm=[1, 0], marks=["dynamic", "static"]),
              TensorInput(name="x1", shape=["s0", 3], dtype="int64"),
              TensorInput(name="x2", shape=["s0", 3], dtype="int64", alias={"of": "x1", "view": "same",
                                                                             "calls": [True, False, True]})]
    p = program([("sin", ["x0"], {}), ("add", ["v0", "x2"], {})], shape=["s0", 3], inputs=inputs)
    got = pairs.pairs_of(p)
    for pair in [("layout:permuted", "sin"), ("mark:dynamic", "sin"), ("mark:static", "sin"), ("dtype:float", "sin"),
                 ("producer:pointwise", "add"), ("alias:same", "add"), ("alias:flips", "add"), ("dtype:int", "add"),
                 ("backward:False", "sin"), ("fullgraph:False", "add"), ("mode:default", "add")]:
        assert pair in got["op"], pair
    assert ("producer:pointwise", "family:binary") in got["family"]
    assert ("layout:permuted", "family:pointwise") in got["family"]
    # what the program does not hold: no value x1 (the alias base) is read, sin reads no int, no op reads a pad
    for pair in [("alias:base", "add"), ("dtype:int", "sin"), ("producer:pad", "add"), ("layout:permuted", "add")]:
        assert pair not in got["op"], pair
    assert got["op"] <= pairs.universe()["op"] and got["family"] <= pairs.universe()["family"]


def test_feasibility_refuses_what_no_program_can_hold(pairs):
    feas = pairs.Feasibility()
    # channels_last needs rank 4 or 5, mm takes rank 2; mm_int has no gradient; in place into an expanded input
    for pair in [("layout:channels_last", "mm"), ("backward:True", "mm_int"), ("layout:expanded", "relu_")]:
        assert not feas.feasible(*pair), pair
    for pair in [("layout:permuted", "mm"), ("producer:pad", "mm"), ("alias:narrow", "add_"),
                 ("layout:channels_last", "family:nn")]:
        assert feas.feasible(*pair), pair
    assert feas.answers["layout:channels_last|mm"] is False  # cached
