"""The regexes of known-issue rules (fuzz/findings/status/known.py), on an engine
that cannot be made to hang or to eat the machine.

A rules file comes from someone else, so each of its regexes is bounded
three ways: it runs on RE2 (the google-re2 package), whose search takes time
linear in the text whatever the pattern; each regex gets a memory cap, the
file's regexes together share MAX_FILE_MEM; and the searches of one finding
against the whole file share FILE_SECONDS, past which the rest count as no
match (warned once). A pattern RE2 refuses (a backreference, a lookaround, a
repetition over 1000, one too big for its memory) is a PatternError, which
the loader turns into one line naming the rule.

Where google-re2 cannot be imported (a machine without network that has
not got it), the same rules run on the backtracking `regex` package, held to
what it can run in bounded time: a pattern must expand to at most
MAX_EXPANSION nodes (counted repetitions multiply; `regex` unrolls them while
it compiles), and no repetition may hold another repetition or an
alternation (`(a|aa)+`, `(x+)+`: the shapes that backtrack exponentially);
each search has SEARCH_SECONDS and a regex that runs out once is dropped for
the rest of the process (warned), and one finding's searches share
FILE_SECONDS. `ENGINE` names the one in use.
"""

from __future__ import annotations

import re
import time

try:
    import re2
except ImportError:  # the fallback: see the module docstring
    re2 = None

ENGINE = "re2" if re2 is not None else "regex"
MAX_FILE_MEM = 256 << 20  # bytes of RE2 memory all of a file's regexes may use together
MAX_REGEX_MEM = 8 << 20  # ... and one of them at most
MIN_REGEX_MEM = 64 << 10  # ... and at least (RE2 refuses a pattern too large for it)
FILE_SECONDS = 5.0  # searches of one finding against one rules file, all regexes together
SEARCH_SECONDS = 0.25  # one search, on the fallback engine (the regex module notices it within a second)
MAX_EXPANSION = 20_000  # nodes a pattern expands to, on the fallback engine


class PatternError(ValueError):
    """A pattern the engine refuses (one line: why)."""


class Budget:
    """The time one finding's searches against one rules file may take together."""

    def __init__(self, seconds: float | None = None):
        self.left = FILE_SECONDS if seconds is None else seconds

    @property
    def spent(self) -> bool:
        return self.left <= 0


class Pattern:
    """One compiled rule regex: `search(text, budget)` is True, False, or None when the budget ran out."""

    def __init__(self, text: str, mem: int):
        self.text = text
        if re2 is not None:
            options = re2.Options()
            options.max_mem = mem
            options.log_errors = False  # RE2 would write its refusal to stderr besides raising it
            try:
                self._compiled = re2.compile(text, options)
            except re2.error as e:
                raise PatternError(_decoded(e)) from None
            self._timeout = {}
        else:
            import regex

            _check_expansion(text)
            try:
                self._compiled = regex.compile(text)
            except (regex.error, ValueError, OverflowError, RecursionError, MemoryError) as e:
                raise PatternError(f"is not a valid regex: {e}") from None
            self._timeout = {"timeout": SEARCH_SECONDS}
        self.dropped = False  # ran out of time once (the fallback engine): never searched again

    def search(self, text: str, budget: Budget) -> bool | None:
        if budget.spent or self.dropped:
            return None
        start = time.monotonic()
        try:
            return self._compiled.search(text, **self._timeout) is not None
        except TimeoutError:
            self.dropped = True
            return None
        finally:
            budget.left -= time.monotonic() - start


def compile_all(patterns: list[str]) -> list[Pattern]:
    """The patterns of one rules file compiled, each with its share of MAX_FILE_MEM; PatternError (with the
    index of the pattern as `.index`) for the first one refused."""
    mem = max(MIN_REGEX_MEM, min(MAX_REGEX_MEM, MAX_FILE_MEM // max(1, len(patterns))))
    out = []
    for i, p in enumerate(patterns):
        try:
            out.append(Pattern(p, mem))
        except PatternError as e:
            e.index = i
            raise
    return out


def _decoded(e) -> str:
    why = e.args[0] if e.args else e
    why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
    return f"is not a valid regex for the linear-time engine (RE2: {why})"


def _check_expansion(text: str) -> None:
    """PatternError when `text` (Python re syntax, which the fallback's patterns must also be) expands past
    MAX_EXPANSION nodes: counted repetitions multiply what they repeat."""
    try:
        import re._parser as sre_parse  # Python 3.11+
    except ImportError:  # 3.10
        import sre_parse
    try:
        tree = sre_parse.parse(text)
    except (re.error, ValueError, OverflowError, RecursionError) as e:
        raise PatternError(f"is not a valid regex: {e}") from None
    if _nests_repetition(tree, inside=False):
        raise PatternError("is a regex that repeats a repetition or an alternation (as in (a|aa)+ or (x+)+), which "
                           "the backtracking engine may take exponential time on; install google-re2 for the "
                           "linear-time engine, or write it without")
    if _expansion(tree) > MAX_EXPANSION:
        raise PatternError(f"is a regex that expands to more than {MAX_EXPANSION} nodes (counted repetitions multiply); "
                           "install google-re2 for the linear-time engine, or write it smaller")


def _nests_repetition(items, inside: bool) -> bool:
    """Whether a repetition (of more than once) holds another one or an alternation, in an sre parse tree."""
    for op, av in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            if hi > 1 and (inside or _nests_repetition(sub, True)):
                return True
            if hi <= 1 and _nests_repetition(sub, inside):
                return True
        elif name == "BRANCH":
            if inside or any(_nests_repetition(b, inside) for b in av[1]):
                return True
        elif name == "SUBPATTERN" and _nests_repetition(av[-1], inside):
            return True
        elif name in ("ASSERT", "ASSERT_NOT") and _nests_repetition(av[1], inside):
            return True
    return False


def _expansion(items) -> int:
    total = 0
    for op, av in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            times = max(lo, 1 if hi > 65535 else hi)  # MAXREPEAT: unbounded (not unrolled)
            total += max(1, times) * _expansion(sub)
        elif name == "SUBPATTERN":
            total += _expansion(av[-1])
        elif name == "BRANCH":
            total += sum(_expansion(b) for b in av[1])
        elif name in ("ASSERT", "ASSERT_NOT"):
            total += _expansion(av[1])
        else:
            total += 1
        if total > MAX_EXPANSION:
            return total
    return total
