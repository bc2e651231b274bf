"""Findings that depend on the machine's load, and the settings that make
them deterministic.

Some of Inductor's decisions are taken by timing on the machine: pad_mm runs
a matmul padded and unpadded and keeps the faster. A bug on one side of such
a decision shows only when the timing goes that way: often on a GPU box
loaded by a campaign's workers, rarely on a quiet one. Shrunk as found, such
a finding either "does not reproduce" or, shrunk under load, gives a repro
that passes on the filer's quiet machine.

A Steadier names what a finding must show for such a decision to be
suspected, the options that force the decision one way and those that turn
it off. A suspect is shrunk with the forcing options set and kept
(`pinned`: the shrinker may not drop them) when the decision is its cause:
it goes with the decision off and shows with it forced. Its repro then sets
them and reproduces anywhere (fuzz/findings/shrink/entry.py shrink_entry).

Measured on an H200 (docs/benchmarks.md, "Long jobs, fourth round"): four
matmul stride mismatches of a soak failed in 3 of 64 runs under load, in 0
of 64 with shape padding off, and in 64 of 64 with force_shape_pad.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Steadier:
    name: str
    options: dict  # Inductor options to add (fuzz/program/ir.py RunSettings.options)
    why: str  # one line, for logs and meta.json
    outcomes: tuple = ()  # the verdict's outcome is one of these
    device: str = ""  # the program's device type
    backend: str = "inductor"
    families: tuple = ()  # the program holds an op of one of these families
    off: dict = field(default_factory=dict)  # options that turn the decision off (a program with them is no suspect)

    def applies(self, program, verdict) -> bool:
        from fuzz.program.opdb import OPS

        s = program.settings
        if s.backend != self.backend or (self.device and program.device_type() != self.device):
            return False
        if self.outcomes and verdict.outcome.value not in self.outcomes:
            return False
        if self.families and not any(OPS[c.op].family in self.families for c in program.ops if c.op in OPS):
            return False
        opts = s.options or {}
        if any(opts.get(k) == v for k, v in self.off.items()):
            return False
        return any(opts.get(k) != v for k, v in self.options.items())  # something left to set


STEADIERS = (
    Steadier(
        name="pad_mm",
        options={"force_shape_pad": True},
        why="pad_mm pads a matmul only when its benchmark says padded is faster; its padded output "
            "strides can leak to the graph's outputs (pytorch/pytorch#152520)",
        outcomes=("stride-mismatch",), device="cuda", families=("matrix",),
        off={"shape_padding": False},
    ),
)

# the options a steadied program may hold (the program schema names them)
OPTIONS = {k: (v,) for s in STEADIERS for k, v in s.options.items()}


def steadied(program, verdict) -> list[tuple[Steadier, object, object]]:
    """For each steadier that applies: it, and copies of `program` with the decision forced and turned off."""
    out = []
    for s in STEADIERS:
        if s.applies(program, verdict):
            forced, off = copy.deepcopy(program), copy.deepcopy(program)
            forced.settings.options = {**(program.settings.options or {}), **s.options}
            off.settings.options = {**{k: v for k, v in (program.settings.options or {}).items() if k not in s.options},
                                    **s.off}
            out.append((s, forced, off))
    return out


def pinned(evaluate, options: dict):
    """`evaluate` for a shrink that must keep `options`: a program without them is
    answered "rejected" unjudged, so the shrinker never accepts it."""
    from fuzz.judge.verdict import Outcome, Verdict

    def judge(p):
        opts = p.settings.options or {}
        if any(opts.get(k) != v for k, v in options.items()):
            return Verdict(outcome=Outcome.REJECTED, message=f"the shrink keeps {options}: they make it deterministic")
        return evaluate(p)

    return judge
