"""Compiled-only errors that are the compiler refusing what the program asked
for, by design, rather than bugs. They get Outcome.REJECTED: counted and shown
apart from findings. Kept as data so the list is easy to revise as upstream
changes what counts as a bug.

A rule matches when one exception in the chain has one of `exc_types` (by
class name) and, if given, its message matches `message`; `marks` limits the
rule to programs that use one of those dynamic markings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    exc_types: tuple
    message: str = ""  # regex searched in the message
    marks: tuple = ()  # program must use one of these marks
    fullgraph: bool = False  # only for programs compiled with fullgraph=True
    why: str = ""


RULES = (
    Rule("constraint-violation", ("ConstraintViolationError",),
         why="mark_dynamic asserted dynamism on a dim the program specialises"),
    Rule("data-dependent-guard",
         ("GuardOnDataDependentSymNode", "PendingUnbackedSymbolNotFound", "UserError", "DataDependentOutputException"),
         message=r"data-dependent|Could not guard on data-dependent|GuardOnDataDependentSymNode|unbacked",
         marks=("unbacked",),
         why="mark_unbacked promises no guards on the size; an op needs one"),
    Rule("fullgraph-graph-break", ("Unsupported", "UserError"), fullgraph=True,
         why="fullgraph=True makes a graph break an error, and the program has one (a data-dependent op "
             "without the capture flags, an op Dynamo does not trace)"),
)


def match(chain: list[tuple[str, str]], marks: set, *, fullgraph: bool = False) -> Rule | None:
    """chain: (exception class name, message) from outermost to innermost."""
    for rule in RULES:
        if rule.marks and not marks & set(rule.marks):
            continue
        if rule.fullgraph and not fullgraph:
            continue
        for typ, msg in chain:
            if typ in rule.exc_types and (not rule.message or re.search(rule.message, msg)):
                return rule
    return None
