"""Coverage guidance (`shapefuzz run --guided`): a pool of the
programs that reached compiler lines no earlier case had (fuzz/judge/coverage.py),
and mutants of them (strategies/mutate.py) interleaved with fresh draws.

Case i is a mutant slot when i % EVERY == EVERY - 1; the other cases are the
generator's as without guidance. The slots of cases [c*CHUNK, (c+1)*CHUNK)
are filled from one draw of chunk c, made when the campaign first reaches the
chunk, from the first n programs of the pool, n being the pool's size then
(recorded in guide.jsonl). A slot whose chunk had an empty pool, or whose draw
gave no valid mutant, takes the fresh program. A resume draws chunk c again
from the recorded n: the campaign is deterministic for a seed given the same
coverage (the same new lines, reported in the same order).

state_dir/
  pool.jsonl   one line per program that reached new lines: its case, how
               many, and the program (loaded as untrusted input: validated)
  guide.jsonl  one line per chunk drawn: its number and the pool size it used
"""

from __future__ import annotations

import random

from fuzz.campaign.errors import StateError

EVERY = 2  # one case in EVERY is a mutant, once the pool has a program
CHUNK = 100  # cases whose mutant slots are drawn at once
PARENTS = 32  # pool programs a chunk's mutants are made from, sampled anew each chunk
_HSEED = 10_000_000  # chunk c is drawn with Hypothesis seed (seed, _HSEED + c): apart from the batches'


class Guide:
    def __init__(self, state, menu, seed: int, *, backend: str, device: str):
        from fuzz.campaign.state import _read_jsonl
        from fuzz.program.ir import Program, ProgramError
        from fuzz.program.loading import load_program

        self.state, self.menu, self.seed = state, menu, seed
        self.pool: list = []  # programs, in the order they reached new lines
        self.pool_cases: list = []  # the case each came from
        where = state.path("pool.jsonl")
        for rec in _read_jsonl(where):
            try:
                p = load_program(rec["program"])
            except ProgramError as e:
                raise StateError(f"{where}: case {rec['case']}: {e}") from None
            if not isinstance(p, Program) or (p.settings.backend, p.settings.device) != (backend, device):
                raise StateError(f"{where}: case {rec['case']} is not a program of this campaign "
                                 f"({backend} on {device})")
            self.pool.append(p)
            self.pool_cases.append(rec["case"])
        self.chunk_pool = {rec["chunk"]: rec["pool"] for rec in _read_jsonl(state.path("guide.jsonl"))}
        bad = sorted(c for c, n in self.chunk_pool.items() if not 0 <= n <= len(self.pool))
        if bad:  # pool.jsonl is synced before a chunk counts its lines: one lost or cut by hand
            raise StateError(f"{state.path('guide.jsonl')}: chunk {bad[0]} drew from "
                             f"{self.chunk_pool[bad[0]]} pool programs, pool.jsonl has {len(self.pool)}")
        self._drawn: dict = {}  # chunk -> its mutants (None where a draw gave none)
        self.origins: dict = {}  # case -> (parent case, edits), until the case is recorded

    def program_for(self, i: int, fresh):
        """The program of case i: a mutant in a mutant slot with one, else `fresh`."""
        if i % EVERY != EVERY - 1:
            return fresh
        chunk, slot = divmod(i, CHUNK)
        got = self._chunk(chunk)
        m = got[slot // EVERY] if slot // EVERY < len(got) else None
        if m is None:
            return fresh
        parent, edits, program = m
        self.origins[i] = {"parent": parent, "edits": edits}
        return program

    def _chunk(self, chunk: int) -> list:
        if chunk not in self._drawn:
            from fuzz.campaign.state import _append

            n = self.chunk_pool.get(chunk)
            if n is None:
                n = len(self.pool)
                _append(self.state.path("guide.jsonl"), {"chunk": chunk, "pool": n}, sync=True)
                self.chunk_pool[chunk] = n
            self._drawn[chunk] = self._draw(chunk, n)
        return self._drawn[chunk]

    def _draw(self, chunk: int, n: int) -> list:
        """Chunk `chunk`'s mutants, from the first n pool programs: (parent case, edits, program) or None each."""
        if n == 0:
            return []
        from fuzz.campaign.generate import _batch
        from strategies.mutate import mutants

        rng = random.Random(f"shapefuzz-guide:{self.seed}:{chunk}")
        picked = rng.sample(range(n), min(n, PARENTS))
        drawn = _batch(mutants([self.pool[k] for k in picked], self.menu), self.seed, _HSEED + chunk,
                       CHUNK // EVERY)
        out, seen = [], set()
        for m in drawn:  # a mutant drawn twice in a chunk is judged once
            key = None if m is None else m[2].to_json(sort_keys=True)
            out.append(None if m is None or key in seen else (self.pool_cases[picked[m[0]]], m[1], m[2]))
            seen.add(key)
        return out

    def record(self, i: int, program, new_lines: int | None) -> dict | None:
        """Case i was judged: a program that reached new lines joins the pool.
        Its origin (parent case and edits) when it was a mutant."""
        from fuzz.campaign.state import _append

        if new_lines and i not in self.pool_cases:  # a case judged again on resume joins once
            # synced: guide.jsonl (synced) may count it, and a resume must find it
            _append(self.state.path("pool.jsonl"), {"case": i, "new_lines": new_lines, "program": program.to_dict()},
                    sync=True)
            self.pool.append(program)
            self.pool_cases.append(i)
        return self.origins.pop(i, None)
