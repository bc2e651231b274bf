"""The import-time heap, kept out of the garbage collector's way.

A process that has imported torch, Dynamo and Inductor holds about 430k objects (torch 2.15, CPU), and they
live as long as the process does. Every full collection walks all of them (0.27 s here), and Dynamo's
tracing allocates enough for hundreds of collections a case. `freeze_imports` moves what is alive once the
imports are done into the permanent generation, which no collection walks: what a case allocates is still
collected as before. In a zygote it also keeps the collector from touching the pages its forked children
share with it.

The frozen objects are handed back to the collector at exit, so that the interpreter's shutdown frees them
as it would have (Triton's bindings report every object of theirs still alive then as a leak).
"""

from __future__ import annotations

import atexit
import gc

_registered = False


def freeze_imports() -> int:
    """Collect, then freeze everything alive now (call it once the process's imports are done); the number of
    objects frozen so far."""
    global _registered
    gc.collect()
    gc.freeze()
    if not _registered:
        _registered = True
        atexit.register(gc.unfreeze)
    return gc.get_freeze_count()
