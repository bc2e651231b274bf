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


def corrupt_always(gm, example_inputs):
    """A wrong output element at every call (where an output has one): a
    finding for a program of any op family, for tests/test_short_repro.py."""
    def run(*args):
        return planted._corrupt_first(gm(*args))
    return run


def refuses_narrow_ints(gm, example_inputs):
    """Refuses every narrow-int input as Inductor's Triton backend refuses an
    atomic_add of one, naming the dtype: one cause, a message per dtype."""
    def run(*args):
        for t in planted._tensors(args):
            if t.dtype in (planted.torch.int8, planted.torch.int16, planted.torch.uint8):
                raise ValueError(f"atomic_add does not support {str(t.dtype).replace('torch.', '')}")
        return gm(*args)
    return run


WARM = 6  # graphs a process compiles right before wrong_when_warm turns wrong
_warm_graphs = 0


def wrong_when_warm(gm, example_inputs):
    """History-dependent: right for the first WARM graphs a process compiles,
    then a wrong output element in every later one, as a verdict that needs a
    worker's earlier cases can be. A fresh process running one short program
    never sees it (tests/test_standalone.py)."""
    global _warm_graphs
    _warm_graphs += 1
    if _warm_graphs <= WARM:
        return gm.forward

    def run(*args):
        return planted._corrupt_first(gm(*args))
    return run


def disk_full_while_marked(gm, example_inputs):
    """Raises ENOSPC, as a compiler that cannot write its cache does, while the
    file named by SHAPEFUZZ_TEST_DISK_FULL exists; else runs the graph as is
    (tests/test_disk.py: the campaign stops, then resumes with nothing lost)."""
    import errno
    import os

    marker = os.environ.get("SHAPEFUZZ_TEST_DISK_FULL")

    def run(*args):
        if marker and os.path.exists(marker):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/tmp/torchinductor_test/cache")
        return gm(*args)
    return run


def corrupt_large_aot(gm, example_inputs):
    """corrupt_large behind AOTAutograd: aot_eager with the planted bug (its
    forward graph runs eagerly, the first output element wrong past THRESHOLD)."""
    from torch._dynamo.backends.common import aot_autograd

    return aot_autograd(fw_compiler=planted.corrupt_large)(gm, example_inputs)


def corrupt_large_inductor(gm, example_inputs):
    """The same bug behind Inductor (a compile costs seconds): what a user's
    Inductor-based backend whose bug aot_eager shows too looks like. It lists
    the cheaper backends to shrink it under (fuzz/judge/backends.py cheaper)."""
    from torch._inductor.compile_fx import compile_fx

    compiled = compile_fx(gm, example_inputs)

    def run(*args):
        out = compiled(*args)
        if any(n > planted.THRESHOLD for t in planted._tensors(args) for n in t.shape):
            return planted._corrupt_first(out)
        return out
    return run


corrupt_large_inductor.cheaper = ("eager", "aot_eager", "tests.planted_extra:corrupt_large_aot")


def corrupt_large_with_pad_inductor(gm, example_inputs):
    """corrupt_large, but only in graphs that pad: its cheaper stand-in
    (corrupt_large_aot) shows it without the pad, so a program shrunk under
    that one loses the pad and does not reproduce here."""
    if not planted._has_pad(gm):
        return gm.forward
    return corrupt_large_inductor(gm, example_inputs)


corrupt_large_with_pad_inductor.cheaper = ("tests.planted_extra:corrupt_large_aot",)
