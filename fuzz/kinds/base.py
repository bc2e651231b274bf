"""The protocol every program kind implements once.

A kind is what shapefuzz can judge: a torch.compile'd function over a size
schedule (compiled.py), or a torch_xla lazy-tensor step sequence (steps.py).
Everything outside fuzz/kinds asks the kind of a program (kinds.kind_of)
for what differs between them, never which kind it is.
"""

from __future__ import annotations

from typing import Any, Iterator


class ProgramKind:
    name: str = ""
    noun: str = ""  # what a user calls one, in messages: "torch.compile program"
    recycle_after: int = 200  # cases a campaign worker judges before it is replaced

    # -- the program ---------------------------------------------------------
    def load(self, d: dict) -> Any:
        """The validated program; ProgramError when it is not."""
        raise NotImplementedError

    def repro_source(self, p, title: str = "") -> str:
        raise NotImplementedError

    # -- judging -----------------------------------------------------------------
    def judge(self, p):
        """The Verdict of p, in this process (a finding rerun once; FLAKY if the rerun passes)."""
        raise NotImplementedError

    def judge_isolated(self, p, timeout: float):
        """The Verdict of p, judged in a fresh process (crashes and hangs become verdicts)."""
        raise NotImplementedError

    isolated_by_default: bool = False  # judged in a fresh process even when nothing asks for it

    def runs_on(self, p) -> tuple[str, str]:
        """(backend name, device) p is judged with: a row of fuzz/judge/backends.py's table."""
        raise NotImplementedError

    def retarget(self, p, backend: str | None = None, device: str | None = None):
        """p with another backend and/or device (None: keep); ValueError when its kind cannot."""
        if backend or device:
            raise ValueError(f"a {self.name} program has no backend or device to override")
        return p

    def unavailable(self, p, retarget: bool = True) -> str | None:
        """Why this machine cannot judge p (a missing stack or device), or None;
        retarget: the command takes --device, so the fix may name it."""
        return None

    def describe_run(self, p, v) -> str:
        """The line `shapefuzz check` prints under the verdict."""
        return ""

    # -- campaign workers ------------------------------------------------------------
    def similar_key(self, d: dict) -> str | None:
        """A key two program dicts share when they differ only where a hang
        cannot care (the campaign's pool runs such programs one after another
        and skips the rest of them once one hangs), or None: no such grouping."""
        return None

    def worker_env(self) -> dict | None:
        """Environment the campaign's workers need beyond the parent's."""
        return None

    def prepare_worker(self) -> None:
        """Once per worker process, before its first case."""

    def evaluate(self, d: dict, **options) -> tuple[dict, str | None, dict]:
        """(verdict dict, error, extra) for one program dict in a worker:
        error is "program" (bad program), "harness" (anything else) or None;
        extra may carry "program" (the standalone form that reproduced) and
        "restart" (the worker must be replaced). options: rerun,
        check_strides, confirmed (signature keys whose findings need no
        rerun); a kind ignores those it has no use for."""
        raise NotImplementedError

    def in_process(self, cases, confirmed=()) -> Iterator[tuple[int, dict, dict]]:
        """Judge (index, program) pairs in this process (a campaign without
        workers); confirmed: as WorkerPool.confirmed (read at each case)."""
        self.prepare_worker()
        for i, p in cases:
            vd, _, extra = self.evaluate(p if isinstance(p, dict) else p.to_dict(), confirmed=frozenset(confirmed))
            yield i, vd, {"wall": vd.get("seconds"), "restart": None, **extra}

    def strategy(self, cfg):
        """The Hypothesis strategy a campaign with CampaignConfig `cfg` draws from."""
        raise NotImplementedError

    def mutation_menu(self, cfg):
        """What coverage guidance's edits of programs draw from (strategies/mutate.py Menu); None where this
        kind's programs have no edits (`shapefuzz run --guided` refuses it)."""
        return None

    # -- findings ------------------------------------------------------------------------


    def known_issue(self, v) -> str | None:
        """A known upstream issue this kind's own audit labels the verdict with."""
        return None

    def render_report(self, entry) -> str:
        raise NotImplementedError

    def op_label(self, name: str) -> str:
        """What a report calls the op `name` of this kind's programs: the API a user writes, not the harness's name."""
        return name

    triage: str | None = None  # why `shapefuzz triage` cannot ablate this kind, or None when it can

    # -- shrinking (fuzz/findings/shrink/engine.py with the kind's passes) -------------------
    shrink_options: frozenset = frozenset()  # the kind-specific options of `shapefuzz shrink` it takes

    def shrink_entry(self, entry_dir, *, time_budget: float, reruns: int, write: bool, **options):
        """Shrink a corpus entry with its signature pinned; rewrite it (write) through the corpus.
        options may carry `onto`: (minimal key, minimal program) pairs of known bugs to try first
        (a kind without such a stage ignores it)."""
        raise NotImplementedError

    def size(self, p) -> tuple:
        """The shrinker's cost of p: the smaller of two programs for one bug represents it."""
        raise NotImplementedError

    def shrink_case(self, p, *, time_budget: float, timeout: float, **options):
        """Judge p, pin its signature and shrink it; ValueError when p is not a finding."""
        raise NotImplementedError
