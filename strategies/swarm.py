"""Swarm draws: each batch of programs draws from a random part of the
generator's menu (swarm testing, as Csmith's authors used it). A feature left
out of a batch makes room for the others, so a conjunction of rare features
(an unbacked size met by a binary op, a cropping pad into a matrix op) turns
up in some batches far more often than in a blind draw, and features that
suppress a bug (a contiguous-only layout set) are absent from others.

A batch's swarm depends on (seed, batch) alone, so a campaign's stream is the
same on a resume and in every drawing process. Each feature is kept with
probability KEEP; what every program needs stays (one floating dtype, the
contiguous layout, the static mark)."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from fuzz.program import dtypes as D
from fuzz.program.ir import MARKS
from fuzz.program.layouts import LAYOUTS
from fuzz.program.opspec import FAMILIES

from .settings import DYNAMO

KEEP = 0.5
# Swarms a batch of programs draws from, each program one of them: with one swarm a batch (100 programs) a
# 400-case campaign saw four swarms, and a conjunction that needs three kept features (one swarm in eight) was
# often in none of them (docs/benchmarks.md).
PER_BATCH = 10
MIN_FAMILIES = 2  # one family alone is often an op that suits few values: most draws would be rejected
DYNAMIC_FLAGS = (None, True, False)


@dataclass(frozen=True)
class Swarm:
    """The part of the menu one batch draws from (each a subset, in the menu's order)."""
    families: tuple
    dtypes: tuple
    layouts: tuple
    marks: tuple
    dynamic_flags: tuple
    dynamo_flags: tuple  # Dynamo settings that may be switched on
    options: tuple  # Inductor flags that may be switched on
    backward: bool
    aliasing: bool
    fullgraph: bool

    def narrow(self, kw: dict) -> dict:
        """programs()'s keyword arguments `kw`, narrowed to this swarm."""
        out = dict(kw)
        out.update(families=self.families, dtypes=self.dtypes, layouts=self.layouts, marks=self.marks,
                   dynamic_flags=self.dynamic_flags, dynamo_flags=self.dynamo_flags, aliasing=self.aliasing,
                   fullgraph_draws=(False, False, True) if self.fullgraph else (False,))
        if not self.backward:
            out["backward_every"] = None
        menu = kw.get("options_menu")
        if menu:
            out["options_menu"] = {k: v for k, v in menu.items() if k in self.options}
        return out

    def describe(self) -> dict:
        return asdict(self)


def _subset(rng: random.Random, items, *, keep=(), at_least: int = 0) -> tuple:
    """Each of `items` kept with probability KEEP (those in `keep` always); at
    least `at_least` of them, topped up at random. In `items`' order."""
    chosen = {x for x in items if x in keep or rng.random() < KEEP}
    rest = [x for x in items if x not in chosen]
    rng.shuffle(rest)
    while len(chosen) < min(at_least, len(items)):
        chosen.add(rest.pop())
    return tuple(x for x in items if x in chosen)


def swarm_for(seed: int, batch: int, *, families=FAMILIES, dtypes=D.ALL, options=()) -> Swarm:
    """The swarm of batch `batch` of a campaign with seed `seed`, drawn within
    the campaign's own `families`, `dtypes` and Inductor `options`."""
    rng = random.Random(f"shapefuzz-swarm:{seed}:{batch}")
    fams = _subset(rng, tuple(families), at_least=MIN_FAMILIES)
    floats = [d for d in dtypes if d in D.FLOATING]
    # one floating dtype always: nn, matrix and resample ops take floats only
    must = (rng.choice(floats),) if floats else ()
    dts = _subset(rng, tuple(dtypes), keep=must, at_least=1)
    return Swarm(
        families=fams, dtypes=dts,
        layouts=_subset(rng, LAYOUTS, keep=("contiguous",)),  # a rank-0 input has no other layout
        marks=_subset(rng, MARKS, keep=("static",)),
        dynamic_flags=_subset(rng, DYNAMIC_FLAGS, at_least=1),
        dynamo_flags=_subset(rng, tuple(DYNAMO)),
        options=_subset(rng, tuple(options)),
        backward=rng.random() < KEEP, aliasing=rng.random() < KEEP, fullgraph=rng.random() < KEEP)


class SwarmPrograms:
    """A program strategy per batch (fuzz.campaign.generate draws batch b from
    at(seed, b)): each program drawn from programs(**kw) narrowed to one of the
    batch's PER_BATCH swarms (the first, when shrinking)."""

    def __init__(self, **kw):
        self.kw = kw

    def swarms(self, seed: int, batch: int) -> list:
        from fuzz.program.opspec import FAMILIES as ALL_FAMILIES

        return [swarm_for(seed, batch * PER_BATCH + k, families=self.kw.get("families") or ALL_FAMILIES,
                          dtypes=self.kw.get("dtypes") or D.ALL, options=tuple(self.kw.get("options_menu") or {}))
                for k in range(PER_BATCH)]

    def at(self, seed: int, batch: int):
        from hypothesis import strategies as st

        from .programs import programs

        each = [programs(**s.narrow(self.kw)) for s in self.swarms(seed, batch)]
        return st.integers(0, len(each) - 1).flatmap(lambda k: each[k])
