"""A seed gives the same stream whatever else is loaded: Hypothesis's
harvesting of literals from local modules is off while generating."""

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
