"""Every candidate the compiled kind's shrink passes make from drawn programs
either typechecks or is rejected with ProgramError: a pass that makes a param
an op's check lets through (embedding dim=None once did) crashes shrink jobs."""

from fuzz.findings.shrink.compiled import COMPILED
from fuzz.program.ir import ProgramError

from helpers import draw_programs


class _Verdict:  # the calls pass reads the verdict's failing call
    call = 0


def test_shrink_candidates_typecheck_or_are_rejected_cleanly():
    checked = rejected = 0
    for p in draw_programs(120, seed=9):
        for name, make in COMPILED.passes(_Engine()):
            for _what, q in make(p):
                try:
                    COMPILED.check(q)
                    checked += 1
                except ProgramError:
                    rejected += 1
    assert checked > 1000 and rejected > 0, (checked, rejected)


class _Engine:
    current_verdict = _Verdict()
