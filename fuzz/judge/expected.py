"""Compiled-only errors that are the compiler refusing what the program asked
for, by design, rather than bugs; and findings that are by design once judged
again as the maintainers' rules say (`REJUDGE`). They get Outcome.REJECTED: counted and shown
apart from findings. Kept as data so the list is easy to revise as upstream
changes what counts as a bug.

A rule matches when one exception in the chain has one of `exc_types` (by
class name) and, if given, its message matches `message`; `marks` limits the
rule to programs that use one of those dynamic markings, `unbacked_one` to
programs that broadcast a data-dependent size of 1 against a larger size.
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
    unbacked_one: bool = False  # only for programs where an unbacked size that is 1 meets a larger one
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
    # The program broadcasts a data-dependent size that is 1 at run time against a larger size
    # (by_design.unbacked_one_broadcast); eager broadcasts, the compiler assumes an unbacked size does not
    # broadcast (upstream calls this unbacked/backed mismatch expected: a fuzzer's mistake, not a bug) and
    # asserts that: at run time (the runtime assert of Dynamo's graph, Inductor's size assert, and in a
    # backward the gradient's reduction to the unbacked size, sum_to or mask_keep's index backward, that the
    # forward assumed equal), or at compile time where the size's range rules the other size out (a mask of
    # a 1-element value against 2: "The size of tensor a (2) must match the size of tensor b (u0)", or
    # "Attempting to broadcast a dimension of length u0"). A wrong answer there is no error, and stays a
    # finding.
    Rule("unbacked-broadcast-assert", ("RuntimeError", "AssertionError"),
         message=r"Runtime assertion failed for expression .*\bu\d+|^expected size \d+==\d+, stride|"
                 r"^(Eq\()?u\d+\b|^Attempting to broadcast a dimension of length .*\bu\d+|"
                 r"^The size of tensor a \(.*\bu\d+.*\) must match the size of tensor b|"
                 r"^The size of tensor a \(.*\) must match the size of tensor b \(.*\bu\d+|"
                 r"^shape mismatch: value tensor of shape \[.*\] cannot be broadcast to indexing result",
         unbacked_one=True,
         why="the compiler assumes an unbacked size does not broadcast, by design, and asserts that at run time "
             "(the runtime assert of Dynamo's graph, Inductor's size assert); eager broadcasts a size of 1"),
)


def match(chain: list[tuple[str, str]], marks: set, *, fullgraph: bool = False,
          unbacked_one: bool = False) -> Rule | None:
    """chain: (exception class name, message) from outermost to innermost; unbacked_one: the program
    broadcasts an unbacked size that is 1 against a larger one (by_design.unbacked_one_broadcast)."""
    for rule in RULES:
        if rule.marks and not marks & set(rule.marks):
            continue
        if rule.fullgraph and not fullgraph:
            continue
        if rule.unbacked_one and not unbacked_one:
            continue
        for typ, msg in chain:
            if typ in rule.exc_types and (not rule.message or re.search(rule.message, msg)):
                return rule
    return None


@dataclass(frozen=True)
class Rejudge:
    """A finding the maintainers call by design when it goes away judged again
    under another setting (the runner's _rejudged): REJECTED under `name`."""
    name: str
    outcome: str  # the Outcome value it applies to
    exc_message: str = ""  # regex searched in "exc_type: message"; "" matches any
    fullgraph: bool = False  # only for programs compiled with fullgraph=True
    fullgraph_off: bool = False  # judge again with fullgraph=False
    size_oblivious: bool = False  # judge again under torch.fx.experimental._config.backed_size_oblivious
    why: str = ""


REJUDGE = (
    Rejudge("fullgraph-data-dependent", "compiled-only-error",
            exc_message=r"GuardOnDataDependentSymNode|PendingUnbackedSymbolNotFound|DataDependentOutputException|"
                        r"[Dd]ata-dependent",
            fullgraph=True, fullgraph_off=True,
            why="fullgraph=True promises one graph; an op that needs a guard on a data-dependent value cannot "
                "be traced into it, and without fullgraph Dynamo breaks the graph there (the documented contract)"),
    Rejudge("size-oblivious-recompile", "unexpected-recompile", size_oblivious=True,
            why="a size derived from a dynamic one (s0 // 2) is specialised when it is 0 or 1, by design; the "
                "recompile goes away under backed_size_oblivious, which does not specialise them"),
)


def rejudge_rule(outcome: str, exc_type: str, message: str, *, fullgraph: bool) -> Rejudge | None:
    """The REJUDGE rule for a finding of this outcome and error, or None."""
    for rule in REJUDGE:
        if rule.outcome != outcome or (rule.fullgraph and not fullgraph):
            continue
        if not rule.exc_message or re.search(rule.exc_message, f"{exc_type}: {message}"):
            return rule
    return None
