"""Test-only planted backends for tests/test_shrink.py (named
"tests.planted_extra:NAME"; importable in worker processes too)."""

from __future__ import annotations

from fuzz import planted


def combined(gm, example_inputs):
    """Two planted bugs in one backend: graphs with a pad raise the seed's
    setStorage error (storage_error_on_pad) at calls where every input dim is
    at most THRESHOLD; otherwise any input dim over THRESHOLD corrupts an
    output element (corrupt_large)."""
    corrupt = planted.corrupt_large(gm, example_inputs)
    if not planted._has_pad(gm):
        return corrupt

    def run(*args):
        if any(n > planted.THRESHOLD for t in planted._tensors(args) for n in t.shape):
            return corrupt(*args)
        raise RuntimeError(planted.STORAGE_MESSAGE)
    return run


_graphs = 0


def wrong_first_graph(gm, example_inputs):
    """Flaky: the first graph this process compiles corrupts an output element
    (as corrupt_large does past THRESHOLD); every later graph is right. A
    rerun of its first finding (a fresh compile) therefore disagrees."""
    global _graphs
    _graphs += 1
    if _graphs > 1:
        return gm.forward

    def run(*args):
        return planted._corrupt_first(gm(*args))
    return run
