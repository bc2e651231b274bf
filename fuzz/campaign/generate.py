"""Deterministic program generation from the Hypothesis strategies, outside a
test: a seed gives the same stream of programs (for one Hypothesis version).
Generation (~0.1 s a program) runs a batch ahead, in a thread, beside evaluation.

Hypothesis mixes numeric literals it harvests from "local" modules (any
source outside site-packages: shapefuzz itself, editable-installed) into the
values it draws. The programs of a seed would then change with any edit of
shapefuzz's code, and within one campaign with which of its modules happen to
be imported (a finding imports the corpus code): a resumed campaign would
regenerate other programs. Generation turns that off where the installed
Hypothesis has it."""

from __future__ import annotations

import contextlib
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Iterator

from hypothesis import HealthCheck, Phase, given, seed, settings

from fuzz.program.ir import Program

BATCH = 100
# A stream whose count ends inside a batch draws that batch only this many programs past what it
# still needs (a program equal to an earlier one is dropped): a 12-case campaign drew all 100 of its
# first batch, ~2 CPU-s, before judging its first case. The programs drawn are the batch's first ones,
# the same as the whole batch's (Hypothesis draws in order; max_examples stays the batch size).
_SPARE = 5
# Hypothesis's constant pools are process-wide, and no_local_constants swaps
# them for the length of a draw: a second draw in flight saw the swap undone or
# its cache cleared and drew other programs (3 in 720 side-by-side draws; 0 in
# 680 without the swap). Batches are drawn one at a time, whoever asks.
_DRAWING = threading.Lock()


@dataclass
class Checkpoint:
    """Where generation stands after a whole batch: the next batch, how many
    programs came before it, and their keys (a program equal to an earlier one
    is dropped, so resuming needs them)."""
    batch: int = 0
    produced: int = 0
    seen: set = field(default_factory=set)


def generate(strategy, *, seed_: int = 0, count: int | None = None, skip: int = 0,
             batch_size: int = BATCH, start: Checkpoint | None = None, on_batch=None,
             recipe=None, processes: int = 0) -> Iterator[Program]:
    """Yield distinct programs from `strategy`: batch b uses Hypothesis seed
    (seed_, b). `skip` drops the first programs. `start` resumes at a
    checkpoint (the first program yielded is number start.produced) instead of
    drawing every batch before it again; `on_batch(batch, produced, keys)` is
    told each batch's new keys once it is drawn, to make such checkpoints.
    `batch_size` is part of the stream: campaigns keep the default; the
    batch a `count` ends in is drawn only a few programs past it (its first
    programs, as drawn whole), and makes no checkpoint.
    With `processes` > 0 and `recipe` (a picklable function that returns
    the strategy), batches are drawn in that many processes, several ahead:
    the same stream, since each batch has its own seed. A `strategy` with
    an `at(seed_, batch)` method gives each batch its own strategy (swarm
    draws); one with `each_at(seed_, batch, size)` each program of a batch
    (pair-aimed draws)."""
    start = start or Checkpoint()
    seen: set[str] = set(start.seen)
    produced, batch = start.produced, start.batch
    source = (_InProcesses(recipe, processes, seed_, batch_size) if processes > 0 and recipe is not None
              else _InThread(strategy, seed_, batch_size))
    try:
        source.ask_from(batch, None if count is None else count - produced)
        while count is None or produced < count:
            while True:
                drawn, whole = source.take(batch)
                fresh = _fresh(drawn, seen)
                if whole or len(fresh) >= count - produced:
                    break
                source.ask_whole(batch)  # duplicates took the spare programs of a cut batch
            seen.update(k for k, _ in fresh)
            if on_batch is not None and whole:  # a checkpoint needs the whole batch's keys
                on_batch(batch, produced + len(fresh), [k for k, _ in fresh])
            batch += 1
            left = None if count is None else count - produced - len(fresh)
            if left is None or left > 0:  # needed next: drawn while this one is used
                source.ask_from(batch, left)
            for _, p in fresh:
                produced += 1
                if produced > skip:
                    yield p
                if count is not None and produced >= count:
                    return
    finally:  # a stream given up mid-batch: no Hypothesis run outlives it (they share global state)
        source.close()


def _fresh(drawn, seen) -> list:
    """(key, program) of each program of `drawn` not in `seen` nor earlier in `drawn`."""
    fresh, keys = [], set()
    for p in drawn:
        key = hashlib.sha1(p.to_json(sort_keys=True).encode()).hexdigest()
        if key not in seen and key not in keys:
            keys.add(key)
            fresh.append((key, p))
    return fresh


def _cut(left: int | None, size: int) -> int | None:
    """How many programs of a batch to draw when `left` are still needed: None for all of it."""
    return None if left is None or left + _SPARE >= size else left + _SPARE


class _InThread:
    """Batches drawn one ahead, in a thread of this process (_ahead); the last one a count needs is cut
    short (_cut)."""

    def __init__(self, strategy, seed_: int, size: int):
        self._args = (strategy, seed_)
        self._size = size
        self._drawing: dict = {}  # batch -> (_ahead's waiter, its limit)

    def ask_from(self, batch: int, left: int | None) -> None:
        if batch not in self._drawing:
            limit = _cut(left, self._size)
            self._drawing[batch] = (_ahead(_batch, *self._args, batch, self._size, limit), limit)

    def ask_whole(self, batch: int) -> None:
        self._drawing[batch] = (_ahead(_batch, *self._args, batch, self._size), None)

    def take(self, batch: int) -> tuple[list[Program], bool]:
        """The batch's programs, and whether they are all of it (a cut batch drawn to its limit may not be)."""
        waiter, limit = self._drawing.pop(batch)
        drawn = waiter()
        return drawn, limit is None or len(drawn) < limit

    def close(self) -> None:
        for waiter, _ in self._drawing.values():
            waiter.wait()


class _InProcesses:
    """Batches drawn by a BatchDrawers, up to one ahead per process."""

    def __init__(self, recipe, processes: int, seed_: int, size: int):
        self._drawers = BatchDrawers(recipe, processes)
        self._processes, self._seed, self._size = processes, seed_, size
        self._ahead = None  # the next batch not yet asked for
        self._limits: dict = {}  # batch asked for -> its limit

    def ask_from(self, batch: int, left: int | None) -> None:
        if self._ahead is None:
            self._ahead = batch
        # a count-limited stream asks for no batch it cannot need (each yields at most size programs)
        limit = self._processes if left is None else min(self._processes, -(-left // self._size))
        while self._ahead - batch < max(1, limit):
            # cut as if no program were a duplicate (one that is draws the batch again, whole)
            cut = _cut(None if left is None else left - (self._ahead - batch) * self._size, self._size)
            self._drawers.ask(self._seed, self._ahead, self._size, cut)
            self._limits[self._ahead] = cut
            self._ahead += 1

    def ask_whole(self, batch: int) -> None:
        self._drawers.ask(self._seed, batch, self._size)
        self._limits[batch] = None

    def take(self, batch: int) -> tuple[list[Program], bool]:
        drawn, limit = self._drawers.take(batch), self._limits.pop(batch)
        return drawn, limit is None or len(drawn) < limit

    def close(self) -> None:
        self._drawers.close()


def _drawer_main(conn, recipe) -> None:
    """A drawing process: build the strategy once, then draw each batch asked for."""
    import signal

    from fuzz.campaign.lifeline import exit_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign decides; Ctrl-C reaches it
    exit_with_parent()
    strategy = recipe()
    while True:
        try:
            seed_, batch, size, limit = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = (batch, True, _batch(strategy, seed_, batch, size, limit))
        except Exception as e:  # noqa: BLE001 - raised again in the campaign
            answer = (batch, False, f"{type(e).__name__}: {e}")
        try:
            conn.send(answer)
        except OSError:  # the campaign is done with this stream
            return


class BatchDrawers:
    """Processes that draw batches, so that a driver feeding many workers is not
    held to one thread's rate under its own GIL: on a 4-GPU box 64 workers wanted
    more programs a second than the driver, its event loop beside, could draw.
    Batch b goes to process b mod n; take(b) waits for it."""

    def __init__(self, recipe, processes: int):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self._conns, self._procs = [], []
        self._ready: dict = {}
        for k in range(processes):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_drawer_main, args=(child, recipe), name=f"shapefuzz-draw-{k}", daemon=True)
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)

    def _conn(self, batch: int):
        return self._conns[batch % len(self._conns)]

    def ask(self, seed_: int, batch: int, size: int, limit: int | None = None) -> None:
        self._conn(batch).send((seed_, batch, size, limit))

    def take(self, batch: int) -> list[Program]:
        conn = self._conn(batch)
        while batch not in self._ready:
            try:
                got, ok, value = conn.recv()
            except EOFError:
                raise RuntimeError(f"the process drawing batch {batch} died") from None
            if not ok:
                raise RuntimeError(f"drawing batch {got}: {value}")
            self._ready[got] = value
        return self._ready.pop(batch)

    def close(self) -> None:
        for conn in self._conns:
            conn.close()
        for proc in self._procs:  # they hold no state: one still drawing a batch no one will take is killed
            proc.join(timeout=0.2)
            if proc.is_alive():
                proc.kill()
                proc.join()

    def __enter__(self) -> "BatchDrawers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _ahead(fn, *args):
    """Start fn(*args) in a daemon thread; return a function that waits for its
    result (or raises its error), with .wait() to wait for the thread alone.
    A campaign's driver draws the next batch while the workers judge this one:
    drawn in line, a CUDA batch of 100 stopped the driver for about 4 s and the
    workers that finished meanwhile waited (busy 88% of a 16-worker campaign
    on the H100, 99% drawn ahead: docs/benchmarks.md). The stream is the same:
    batches are still drawn one at a time, in order."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            box["error"] = e

    thread = threading.Thread(target=run, name="shapefuzz-generate", daemon=True)
    thread.start()

    def result():
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]
    result.wait = thread.join
    return result


def checkpoint(batches, first_needed: int) -> Checkpoint:
    """The latest checkpoint from which generation reaches program
    `first_needed`: `batches` is on_batch's records, (batch, produced, keys),
    in order from batch 0."""
    at, produced_before, seen = 0, 0, set()
    for batch, produced, keys in batches:
        if batch != at or produced > first_needed:
            break
        seen.update(keys)
        at, produced_before = batch + 1, produced
    return Checkpoint(at, produced_before, seen)


@contextlib.contextmanager
def no_local_constants():
    """Hypothesis draws without the literals of local modules (see above)."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        original, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
    except (ImportError, AttributeError):  # a Hypothesis without constant harvesting
        yield
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()  # it holds the pools drawn so far
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


# Examples of the Hypothesis run that draws one program of a strategy that gives each program its own
# strategy: the first is the simplest program there is (Hypothesis starts with it), the last is kept.
_RUN_PER_PROGRAM = 2


def _batch(strategy, seed_: int, batch: int, size: int = BATCH, limit: int | None = None) -> list[Program]:
    """Batch `batch` of the stream; with `limit`, only its first `limit` programs (drawn alike)."""
    if hasattr(strategy, "each_at"):  # a strategy per program (strategies/aim.py): a run each
        # (in one run of many examples Hypothesis copies a drawn prefix into later ones, so a program's
        # strategy drawn there would repeat: 21 distinct of 100); its simplest draw may be None (not kept)
        out = []
        for k, one in enumerate(strategy.each_at(seed_, batch, size)):
            if limit is not None and len(out) >= limit:
                break
            out += [p for p in _collect(one, (seed_ * 1_000_003 + batch) * 1_000_003 + k, _RUN_PER_PROGRAM)[-1:]
                    if p is not None]
        return out
    if hasattr(strategy, "at"):  # a strategy per batch (strategies/swarm.py)
        strategy = strategy.at(seed_, batch)
    return _collect(strategy, seed_ * 1_000_003 + batch, size, limit)


class _Enough(BaseException):
    """Ends a Hypothesis run once it drew the programs wanted: not an Exception, which Hypothesis
    would take for a failing example (and draw it again to report it)."""


def _collect(strategy, seed_: int, size: int, limit: int | None = None) -> list[Program]:
    out: list[Program] = []

    @seed(seed_)
    @settings(max_examples=size, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(p):
        out.append(p)
        if limit is not None and len(out) >= limit:
            raise _Enough

    with _DRAWING, no_local_constants():
        try:
            collect()
        except _Enough:
            pass
    return out
