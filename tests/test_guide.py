"""Coverage guidance: mutants of programs (strategies/mutate.py) are valid programs of
the campaign's menu, run in eager as typed, and use every edit; the pool and its chunks
(fuzz/campaign/guide.py) persist in the state dir, so a resumed campaign draws the same
mutants given the same coverage. Python 3.11 cannot measure lines, so the campaign test
feeds a stand-in coverage (the ops and dtypes a case uses); the real one runs on the GPU box."""

import collections
import json

import pytest

from fuzz.campaign.generate import _batch
from fuzz.campaign.guide import CHUNK, EVERY, Guide
from fuzz.campaign.state import CampaignState, StateError
from fuzz.program.interp import load
from fuzz.program.ir import OpCall, Program, RunSettings, TensorInput
from fuzz.program.opdb import OPS
from fuzz.program.typecheck import typecheck
from strategies import programs
from strategies.mutate import EDITS, Menu, keeps_rules, mutants

_cache = {}
HERE = {"backend": "inductor", "device": "cpu"}  # the parents' settings


def _parents(**kw):
    key = tuple(sorted(kw.items()))
    if key not in _cache:
        _cache[key] = _batch(programs(**kw), 7, 0, 40)
    return _cache[key]


def _mutants(parents, menu, n=200, batch=0):
    return [m for m in _batch(mutants(parents, menu), 7, batch, n) if m is not None]


def test_mutants_are_valid_edits_of_their_parents_and_use_every_edit():
    parents = _parents()
    got = _mutants(parents, Menu())
    assert len(got) > 150, "most draws give a mutant"
    kinds = collections.Counter()
    for k, edits, p in got:
        env = typecheck(p)
        assert keeps_rules(p, env)
        assert p != parents[k] and 1 <= len(edits) <= 3
        kinds.update(e.split()[0] for e in edits)
    assert set(kinds) == set(EDITS), kinds


def test_mutants_run_in_eager_as_typed():
    """As programs() promises for its draws: eager runs >= 97% of them at every call."""
    got = _mutants(_parents(), Menu(), n=120, batch=1)
    failures = []
    for _, edits, p in got:
        info, prog = typecheck(p), load(p)
        for call in range(p.calls):
            try:
                out = prog.program(*prog.make_inputs(call))
            except Exception as e:  # noqa: BLE001
                failures.append((edits, repr(e)[:200]))
                break
            got_types = [(str(t.dtype).removeprefix("torch."), t.dim()) for t in out]
            assert got_types == [(info[o].dtype, info[o].rank) for o in p.outputs], (edits, p.to_json())
    assert len(failures) <= 0.03 * len(got), failures[:3]


def test_mutants_stay_inside_the_campaign_menu():
    fams = ("pointwise", "binary", "pad")
    menu = Menu(families=fams, dtypes=("float32", "float64"))
    for _, edits, p in _mutants(_parents(families=fams, dtypes=("float32", "float64")), menu, n=150):
        assert {OPS[c.op].family for c in p.ops} <= set(fams), edits
        assert {x.dtype for x in p.inputs} <= {"float32", "float64"}, edits


def test_the_generator_rules_are_kept():
    def two(mark, op, backward=False):
        arity = OPS[op].arity
        xs = [TensorInput(name=f"x{k}", shape=["s0"], marks=[mark]) for k in range(arity)]
        return Program(sizes={"s0": [2, 3, 4]}, inputs=xs, ops=[OpCall(op, [x.name for x in xs], {}, "v0")],
                       outputs=["v0"], settings=RunSettings(backward=backward))

    assert keeps_rules(two("unbacked", "sin")) and keeps_rules(two("dynamic", "add_"))
    assert not keeps_rules(two("unbacked", "add_")), "an unbacked mark on a symbol an op guards (add_ guards its sizes)"
    assert not keeps_rules(two("dynamic", "add_", backward=True)), "a backward program that writes an input"
    assert keeps_rules(two("dynamic", "add", backward=True))


def _state(tmp_path, name="st"):
    return CampaignState.open(str(tmp_path / name), {"seed": 0, "guided": True})


def test_the_pool_and_its_chunks_persist_and_draw_the_same_mutants(tmp_path):
    parents = _parents()
    st = _state(tmp_path)
    g = Guide(st, Menu(), seed=3, **HERE)
    fresh = parents[0]
    assert g.program_for(1, fresh) is fresh, "an empty pool: the fresh program"
    for i in range(2, CHUNK):  # the rest of chunk 0 drew from the empty pool
        assert g.program_for(i, fresh) is fresh
    for i, p in enumerate(parents[:5]):
        assert g.record(i, p, new_lines=10 + i) is None
    g.record(5, parents[5], new_lines=0)  # nothing new: not in the pool
    g.record(0, parents[0], new_lines=3)  # judged again (a resume): once
    slots = range(CHUNK + EVERY - 1, 2 * CHUNK, EVERY)
    got = [g.program_for(i, fresh) for i in slots]
    assert g.program_for(CHUNK, fresh) is fresh, "not a mutant slot"
    assert sum(p is not fresh for p in got) > 0.8 * len(slots)
    assert {g.origins[i]["parent"] for i in slots if i in g.origins} <= set(range(5))
    st.close()
    again = Guide(_state(tmp_path), Menu(), seed=3, **HERE)
    assert len(again.pool) == 5 and again.chunk_pool == {0: 0, 1: 5}
    assert [again.program_for(i, fresh) for i in slots] == got, "a resume draws chunk 1 again, the same"
    assert again.program_for(1, fresh) is fresh


def test_a_bad_pool_program_is_a_state_error(tmp_path):
    st = _state(tmp_path)
    bad = _parents()[0].to_dict()
    bad["ops"] = [{"op": "no_such_op", "args": ["x0"], "params": {}, "out": "v0"}]
    (tmp_path / "st" / "pool.jsonl").write_text(json.dumps({"case": 4, "new_lines": 2, "program": bad}) + "\n")
    with pytest.raises(StateError, match="pool.jsonl: case 4"):
        Guide(st, Menu(), seed=0, **HERE)
    st.close()


def _stand_in_coverage(monkeypatch):
    """Each case reports as its "lines" the ops and input dtypes it uses."""
    from fuzz.kinds.compiled import CompiledKind

    real = CompiledKind.evaluate

    def evaluate(self, d, **kw):
        vd, a, extra = real(self, d, **kw)
        lines = [f"op:{c['op']}" for c in d["ops"]] + [f"dtype:{x['dtype']}" for x in d["inputs"]]
        return vd, a, {**(extra or {}), "coverage": lines}
    monkeypatch.setattr(CompiledKind, "evaluate", evaluate)


def _campaign(tmp_path, name, cases, monkeypatch):
    from fuzz.campaign.driver import CampaignConfig, run_campaign
    from fuzz.campaign.progress import Progress

    cfg = CampaignConfig(backend="eager", seed=2, max_cases=cases, workers=0, guided=True, coverage=True,
                         shrink=False, triage=False, state_dir=str(tmp_path / name), corpus_dir=str(tmp_path / "c"))
    return run_campaign(cfg, progress=Progress(live=False)).summary


def _log(tmp_path, name):
    cases = [json.loads(x) for x in (tmp_path / name / "cases.jsonl").read_text().splitlines()]
    pool = [json.loads(x) for x in (tmp_path / name / "pool.jsonl").read_text().splitlines()]
    return sorted(cases, key=lambda c: c["i"]), pool


@pytest.mark.campaign
def test_a_guided_campaign_interleaves_mutants_and_resumes_alike(tmp_path, monkeypatch):
    _stand_in_coverage(monkeypatch)
    whole = _campaign(tmp_path, "whole", 40, monkeypatch)
    cases, pool = _log(tmp_path, "whole")
    mutant = [c for c in cases if "parent" in c]
    assert mutant and all(c["i"] % EVERY == EVERY - 1 for c in mutant)
    assert all(c["parent"] < c["i"] for c in mutant) and all(c["edits"] for c in mutant)
    assert {p["case"] for p in pool} == {c["i"] for c in cases if c["new_lines"]}
    assert whole["lineage"]["mutants"] == len(mutant)
    _campaign(tmp_path, "split", 22, monkeypatch)
    _campaign(tmp_path, "split", 40, monkeypatch)
    split_cases, split_pool = _log(tmp_path, "split")
    strip = lambda cs: [(c["i"], c["outcome"], c.get("parent"), c.get("edits"), c["new_lines"]) for c in cs]
    assert strip(split_cases) == strip(cases)
    assert split_pool == pool


def test_mutants_keep_max_ops_and_mark_a_new_input_as_its_symbols():
    fams = ("binary", "matrix")  # ops that take a fresh operand often
    parents = [p for p in _parents(families=fams) if any(m != "static" for x in p.inputs for m in x.marks)]
    menu = Menu(families=fams, max_ops=max(len(p.ops) for p in parents))
    for _, edits, p in _mutants(parents, menu, n=300, batch=2):
        assert len(p.ops) <= menu.max_ops, edits
        marks = {}
        for x in p.inputs:
            for dim, m in zip(x.shape, x.marks or ["static"] * len(x.shape)):
                if isinstance(dim, str):
                    marks.setdefault(dim, set()).add(m)
        assert all(len(m) == 1 for m in marks.values()), (edits, marks)


def test_a_pool_of_another_campaign_or_a_cut_pool_is_a_state_error(tmp_path):
    p = _parents()[0].to_dict()
    p["settings"]["device"] = "cuda"
    st = _state(tmp_path)
    (tmp_path / "st" / "pool.jsonl").write_text(json.dumps({"case": 2, "new_lines": 2, "program": p}) + "\n")
    with pytest.raises(StateError, match="not a program of this campaign"):
        Guide(st, Menu(), seed=0, **HERE)
    (tmp_path / "st" / "pool.jsonl").write_text("")
    (tmp_path / "st" / "guide.jsonl").write_text(json.dumps({"chunk": 0, "pool": 3}) + "\n")
    with pytest.raises(StateError, match="chunk 0 drew from 3"):
        Guide(st, Menu(), seed=0, **HERE)
    st.close()
