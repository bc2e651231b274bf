"""A seed gives the same stream whatever else is loaded: Hypothesis's
harvesting of literals from local modules is off while generating."""

import contextlib
import importlib
import json
import sys
from contextlib import nullcontext

from hypothesis import strategies as st

import fuzz.campaign.generate as gen


class _Values:
    """Stands in for a Program: generate() only asks for its JSON."""

    def __init__(self, xs):
        self.xs = xs

    def to_json(self, **kw):
        return json.dumps(self.xs, **kw)


_STRATEGY = st.lists(st.integers(0, 2**16), min_size=30, max_size=30).map(_Values)


def _draw():
    return [p.to_json() for p in gen.generate(_STRATEGY, seed_=4, count=60)]


def _load_probe(tmp_path, monkeypatch, name):
    (tmp_path / f"{name}.py").write_text("LITERALS = [" + ", ".join(str(3001 + 7 * i) for i in range(400)) + "]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(name)


def test_generation_ignores_literals_of_modules_loaded_later(tmp_path, monkeypatch):
    before = _draw()
    _load_probe(tmp_path, monkeypatch, "shapefuzz_literal_probe")
    try:
        assert _draw() == before
    finally:
        sys.modules.pop("shapefuzz_literal_probe", None)


def test_the_probe_changes_generation_without_the_guard(tmp_path, monkeypatch):
    """The test above can fail: with harvesting on, the probe's literals reach the draws."""
    monkeypatch.setattr(gen, "no_local_constants", nullcontext)
    before = _draw()
    _load_probe(tmp_path, monkeypatch, "shapefuzz_literal_probe2")
    try:
        after = _draw()
        assert after != before
        assert any(int(x) >= 3001 and (int(x) - 3001) % 7 == 0 for p in after for x in json.loads(p)
                   if x not in {y for q in before for y in json.loads(q)})
    finally:
        sys.modules.pop("shapefuzz_literal_probe2", None)


def test_a_checkpoint_resumes_the_same_stream_without_drawing_earlier_batches(monkeypatch):
    """A resumed campaign draws from the batch of its first unjudged case: the
    programs after the checkpoint are those of a draw from the start."""
    records = []
    full = [p.to_json() for p in gen.generate(_STRATEGY, seed_=4, count=230, batch_size=50,
                                              on_batch=lambda *r: records.append(r))]
    assert [r[0] for r in records] == [0, 1, 2, 3] and records[-1][1] < 230  # batch 4, cut at the count: none
    drawn = []
    real_batch = gen._batch
    monkeypatch.setattr(gen, "_batch", lambda st_, s, b, *a: drawn.append(b) or real_batch(st_, s, b, *a))
    for first_needed in (0, 49, 50, 120, 229):
        cp = gen.checkpoint(records, first_needed)
        assert cp.produced <= first_needed < cp.produced + 50
        drawn.clear()
        resumed = [p.to_json() for p in gen.generate(_STRATEGY, seed_=4, count=230, batch_size=50, start=cp)]
        assert resumed == full[cp.produced:]
        assert drawn[0] == cp.batch == first_needed // 50  # no duplicates in this stream: batches of 50


def test_a_count_inside_a_batch_draws_its_first_programs_only(monkeypatch):
    """The batch a count ends in is drawn only a few programs past what is needed: they are the whole
    batch's first programs (a cut batch short of distinct programs is drawn again, whole); a cut batch
    makes no checkpoint (its keys are not the whole batch's)."""
    few = st.integers(0, 1000).map(lambda x: _Values([x % 3 if x < 900 else x]))  # duplicates in a batch
    distinct = {}  # seed -> batch 0's distinct programs, in order, drawn whole
    for s in range(3):
        drawn = [p.to_json() for p in gen._batch(few, s, 0, 30)]
        distinct[s] = [x for k, x in enumerate(drawn) if x not in drawn[:k]]
    calls = []
    real_batch = gen._batch
    monkeypatch.setattr(gen, "_batch", lambda *a: calls.append(a[2:]) or real_batch(*a))
    redrawn = 0
    for s in range(3):
        for count in (1, 3, len(distinct[s])):
            calls.clear()
            records = []
            got = [p.to_json() for p in gen.generate(few, seed_=s, count=count, batch_size=30,
                                                     on_batch=lambda *r: records.append(r))]
            assert got == distinct[s][:count]
            assert calls[0] == (0, 30, count + gen._SPARE)  # cut
            redrawn += (0, 30) in calls  # duplicates took the spare programs: drawn again, whole
            assert {r[0] for r in records} <= {c[0] for c in calls if c[2:] in ((), (None,))}
    assert redrawn
    full = [p.to_json() for p in gen.generate(_STRATEGY, seed_=4, count=50, batch_size=50)]
    records = []
    cut = [p.to_json() for p in gen.generate(_STRATEGY, seed_=4, count=7, batch_size=50,
                                             on_batch=lambda *r: records.append(r))]
    assert cut == full[:7] and calls[-1] == (0, 50, 7 + gen._SPARE) and records == []


def test_checkpoints_need_every_batch_before_them():
    """A gap in the records (a lost line) ends the usable checkpoints there."""
    records = [(0, 50, ["a"]), (2, 150, ["c"])]
    cp = gen.checkpoint(records, 140)
    assert (cp.batch, cp.produced, cp.seen) == (1, 50, {"a"})
    assert gen.checkpoint([], 10) == gen.Checkpoint()


def test_the_next_batch_is_drawn_while_this_one_is_used():
    """A campaign's driver must not stop at each batch boundary to draw: the
    next batch is drawn in a thread while the current one is consumed (and
    only when it will be needed); the stream is the one drawn in line."""
    import threading

    drawn = []

    def spy(strategy, seed_, batch, size=gen.BATCH, limit=None):
        drawn.append((batch, threading.current_thread().name))
        return in_line(strategy, seed_, batch, size, limit)

    in_line = gen._batch
    stream = gen.generate(_STRATEGY, seed_=4, batch_size=10)
    first = [next(stream).to_json() for _ in range(3)]
    stream.close()
    gen._batch = spy
    try:
        ahead = gen.generate(_STRATEGY, seed_=4, batch_size=10)
        got = [next(ahead).to_json() for _ in range(3)]
        ahead.close()  # given up mid-batch: waits for batch 1, started before program 0 was yielded
        assert not [t for t in threading.enumerate() if t.name == "shapefuzz-generate"]
        assert got == first and [b for b, _ in drawn] == [0, 1], drawn
        assert all(name == "shapefuzz-generate" for _, name in drawn), drawn
        drawn.clear()
        assert len(list(gen.generate(_STRATEGY, seed_=4, count=5, batch_size=10))) == 5
        assert [b for b, _ in drawn] == [0], drawn  # no batch drawn past `count`
    finally:
        gen._batch = in_line


def test_two_streams_never_draw_at_once(monkeypatch):
    """Two Hypothesis runs at once in a process changed each other's draws
    (a CI run saw it): streams drawn side by side take turns, and each gets
    the programs it gets alone."""
    import threading
    import time

    alone = [p.to_json() for p in gen.generate(_STRATEGY, seed_=4, count=12, batch_size=6)]
    inside, most = [0], [0]
    real = gen.no_local_constants

    @contextlib.contextmanager
    def counting():
        with real():
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            time.sleep(0.05)  # long enough that two unguarded draws overlap
            try:
                yield
            finally:
                inside[0] -= 1

    monkeypatch.setattr(gen, "no_local_constants", counting)
    got = {}
    threads = [threading.Thread(target=lambda k=k: got.__setitem__(
        k, [p.to_json() for p in gen.generate(_STRATEGY, seed_=4, count=12, batch_size=6)])) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert got == {0: alone, 1: alone, 2: alone}


def test_batches_drawn_in_processes_are_the_stream_drawn_in_a_thread():
    """A driver with many CPUs draws its batches in processes (BatchDrawers), several
    ahead: the programs, their order and the batch records are those of one thread,
    from the start and from a checkpoint."""
    import functools

    from fuzz.campaign.driver import CampaignConfig, campaign_strategy

    cfg = CampaignConfig(device="cpu", seed=3)
    recipe = functools.partial(campaign_strategy, cfg)
    strategy = recipe()

    def draw(processes, start=None):
        records = []
        progs = [p.to_json() for p in gen.generate(strategy, seed_=3, count=45, batch_size=10, start=start,
                                                   on_batch=lambda *r: records.append(r), recipe=recipe,
                                                   processes=processes)]
        return progs, records

    in_thread, records = draw(0)
    assert len(in_thread) == 45 and len(records) >= 5
    assert draw(2) == (in_thread, records)
    cp = gen.checkpoint(records, 23)
    assert draw(2, start=cp)[0] == in_thread[cp.produced:]


def test_a_campaign_with_cpus_to_spare_draws_in_a_process(tmp_path, monkeypatch):
    """The driver hands its recipe (the config, pickled) to a drawing process and
    judges what it draws; a resume after it goes on where it stopped."""
    from fuzz.campaign import driver
    from fuzz.campaign.progress import Progress

    made = []
    real = gen.BatchDrawers
    monkeypatch.setattr(gen, "BatchDrawers", lambda *a: made.append(a[1]) or real(*a))
    monkeypatch.setattr(driver, "drawing_processes", lambda: 1)
    cfg = driver.CampaignConfig(backend="eager", seed=5, max_cases=6, workers=1, shrink=False, triage=False,
                                state_dir=str(tmp_path / "st"), corpus_dir=str(tmp_path / "c"))
    assert driver.run_campaign(cfg, progress=Progress(live=False)).summary["cases"] == 6
    cfg.max_cases = 9
    assert driver.run_campaign(cfg, progress=Progress(live=False)).summary["cases"] == 9
    assert made == [1, 1]
    judged = [json.loads(line)["i"] for line in open(tmp_path / "st" / "cases.jsonl")]
    assert sorted(judged) == list(range(9))
