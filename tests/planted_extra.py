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


def tells_its_frozen_heap(gm, example_inputs):
    """Raises with the number of objects the worker froze out of its collections (fuzz/heap.py): a compile
    error whose message the test reads."""
    import gc

    raise RuntimeError(f"frozen objects: {gc.get_freeze_count()}")


def slow_first_compile(gm, example_inputs):
    """The first compile on this machine runs for an hour, as a cold pool's first compile (Inductor's
    precompiled C++ header made in it) can run past the time limit on a loaded machine: while the file
    named by SHAPEFUZZ_TEST_COLD does not exist, it makes it and sleeps; every later compile is quick
    (tests/test_workers.py: the hang is judged once more, and then it is no hang)."""
    import os
    import time

    marker = os.environ.get("SHAPEFUZZ_TEST_COLD")
    if marker and not os.path.exists(marker):
        open(marker, "w").close()
        time.sleep(3600)
    return gm.forward


def wrong_when_dynamic(gm, example_inputs):
    """A wrong output element from every graph compiled with a symbolic size:
    with a schedule whose first call specialises a derived size (s0 // 2 == 1),
    only the graph of the recompile that follows is wrong (tests/test_by_design.py:
    the size-oblivious re-judge must not hide it)."""
    import torch

    def symbolic(v):
        return isinstance(v, torch.SymInt) or isinstance(v, torch.Tensor) and any(
            isinstance(n, torch.SymInt) for n in v.shape)

    if not any(n.op == "placeholder" and symbolic(n.meta.get("example_value")) for n in gm.graph.nodes):
        return gm.forward

    def run(*args):
        return planted._corrupt_first(gm(*args))
    return run


def data_dependent_error(gm, example_inputs):
    """Raises GuardOnDataDependentSymNode at compile time for graphs that keep
    a data-dependent op, with fullgraph or without (tests/test_by_design.py: a
    compiled-only data-dependent error that the fullgraph=False re-judge must
    not hide)."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    if planted._targets(gm) & planted._DATA:
        import sympy

        raise GuardOnDataDependentSymNode(sympy.Symbol("u0"),
                                          "Could not guard on data-dependent expression Eq(u0, 1) (planted)")
    return gm.forward


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
