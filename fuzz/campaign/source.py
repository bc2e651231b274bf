"""A campaign's source of programs: drawn from the seed in order (fuzz/campaign/generate.py; the
strategy draws swarm batches itself), a resume starting from the batch of its first unjudged case,
and with --guided every other case a mutant of a program that reached new lines (fuzz/campaign/guide.py).
It yields (case index, program dict) until `stop()` says the campaign draws no more."""

from __future__ import annotations

from fuzz.campaign.generate import generate


class CaseSource:
    def __init__(self, cfg, state, strategy, *, recipe=None, processes: int = 0, guide=None, programs: dict,
                 stop):
        self.cfg, self.state, self.strategy, self.recipe, self.processes = cfg, state, strategy, recipe, processes
        self.guide = guide
        self.programs = programs  # case index -> its program, read by the recorder when its verdict comes
        self.stop = stop  # () -> whether to draw no more (a limit, the wind-down)

    def cases(self):
        """The (index, program dict) stream; the cases judged before (a resume) are skipped."""
        state = self.state
        start = state.generation_start()  # a resume draws from the batch of its first unjudged case
        for i, p in enumerate(generate(self.strategy, seed_=self.cfg.seed, count=self.cfg.max_cases, start=start,
                                       on_batch=state.record_batch, recipe=self.recipe, processes=self.processes),
                              start=start.produced):
            if self.stop():
                return
            if i in state.done:
                continue
            if self.guide is not None:
                p = self.guide.program_for(i, p)
            self.programs[i] = p
            yield i, p.to_dict()


def open_guide(cfg, kind, state):
    """--guided: the guide that mutates programs that reached new lines; else None."""
    if not cfg.guided:
        return None
    from fuzz.campaign.guide import Guide

    return Guide(state, kind.mutation_menu(cfg), cfg.seed, backend=cfg.backend, device=cfg.device)
