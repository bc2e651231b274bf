"""Swarm draws (strategies/swarm.py): each batch draws from its own part of the
menu, the same part on every run and resume, and its programs stay inside it."""

import fuzz.campaign.generate as gen
from fuzz.program import dtypes as D
from fuzz.program.ir import MARKS
from fuzz.program.layouts import LAYOUTS
from fuzz.program.opdb import OPS
from fuzz.program.opspec import FAMILIES
from strategies.settings import OPTIONS_CUDA
from strategies.swarm import MIN_FAMILIES, PER_BATCH, SwarmPrograms, swarm_for


def test_a_batch_swarm_depends_on_seed_and_batch_only():
    assert swarm_for(3, 7) == swarm_for(3, 7)
    swarms = {swarm_for(3, b) for b in range(40)}
    assert len(swarms) == 40, "batches draw different parts of the menu"
    assert swarm_for(4, 7) != swarm_for(3, 7)


def test_every_swarm_keeps_what_programs_need_and_leaves_out_something():
    left_out = {"families": 0, "dtypes": 0, "layouts": 0, "marks": 0}
    for b in range(200):
        s = swarm_for(0, b, options=tuple(OPTIONS_CUDA))
        assert len(s.families) >= MIN_FAMILIES and set(s.families) <= set(FAMILIES)
        assert any(d in D.FLOATING for d in s.dtypes), "nn, matrix and resample ops need a float"
        assert "contiguous" in s.layouts and "static" in s.marks
        assert s.dynamic_flags and set(s.options) <= set(OPTIONS_CUDA)
        assert list(s.families) == [f for f in FAMILIES if f in s.families], "menu order: shrinking unchanged"
        for k, full in (("families", FAMILIES), ("dtypes", D.ALL), ("layouts", LAYOUTS), ("marks", MARKS)):
            left_out[k] += len(getattr(s, k)) < len(full)
    assert all(n > 150 for n in left_out.values()), left_out


def test_a_swarm_stays_inside_the_campaign_menu():
    for b in range(50):
        s = swarm_for(1, b, families=("matrix", "nn", "pad"), dtypes=("int8", "float16", "bool"))
        assert set(s.families) <= {"matrix", "nn", "pad"} and len(s.families) >= 2
        assert set(s.dtypes) <= {"int8", "float16", "bool"} and "float16" in s.dtypes


def _programs_by_batch(seed, count, **kw):
    strategy = SwarmPrograms(backend="inductor", device="cpu", **kw)
    records = []
    progs = list(gen.generate(strategy, seed_=seed, count=count, batch_size=20, on_batch=lambda *r: records.append(r)))
    return strategy, progs, records


def _inside(p, s) -> bool:
    drawn = [x for x in p.inputs if not x.alias]
    return ({OPS[o.op].family for o in p.ops} <= set(s.families)
            and {x.dtype for x in drawn[:1]} <= set(s.dtypes)  # the first input is drawn from the menu
            and {x.layout for x in p.inputs} <= set(s.layouts)
            and {m for x in p.inputs for m in x.marks} <= set(s.marks)
            and p.settings.dynamic in s.dynamic_flags and set(p.settings.dynamo) <= set(s.dynamo_flags)
            and (s.backward or not p.settings.backward) and (s.aliasing or not any(x.alias for x in p.inputs))
            and (s.fullgraph or not p.settings.fullgraph))


def test_programs_stay_inside_their_batch_swarms():
    """Each program inside one of its batch's swarms; a batch's programs from several of them."""
    strategy, progs, records = _programs_by_batch(5, 120)
    assert len(progs) == 120
    at, checked = 0, 0
    # the last batch, cut at the count, makes no record: its programs are the rest
    for batch, produced, _keys in records + [(len(records), len(progs) + 1, None)]:
        swarms = strategy.swarms(5, batch)
        assert len(set(swarms)) == PER_BATCH
        homes = []
        for p in progs[at:produced]:
            fits = [k for k, s in enumerate(swarms) if _inside(p, s)]
            assert fits, p.to_json()
            homes.append(fits[0])
            checked += 1
        if produced <= len(progs):  # a batch the count did not cut short
            assert len(set(homes)) >= 3, homes
        at = produced
    assert checked == 120


def test_a_swarm_stream_resumes_from_a_checkpoint():
    strategy, progs, records = _programs_by_batch(2, 70)
    full = [p.to_json() for p in progs]
    cp = gen.checkpoint(records, 45)
    again = [p.to_json() for p in gen.generate(strategy, seed_=2, count=70, batch_size=20, start=cp)]
    assert again == full[cp.produced:]


def test_a_fresh_operand_takes_bool_only_where_the_menu_has_it():
    from strategies.programs import _fresh_dtype

    spec = OPS["ldexp"]

    class Arg:
        dtype = "float32"

    always = lambda _strategy: True  # noqa: E731 - the coin comes up bool
    assert _fresh_dtype(always, spec, [Arg()]) == "bool"
    assert _fresh_dtype(always, spec, [Arg()], dtypes=("float32", "int8")) == "float32"


def test_swarm_is_part_of_the_campaign_identity():
    from fuzz.campaign.driver import CampaignConfig

    assert CampaignConfig(swarm=True).identity()["swarm"] is True
    assert "swarm" not in CampaignConfig().identity(), "older state dirs still resume"
