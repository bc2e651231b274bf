"""Fault-injection torch.compile backends, to test the worker sandbox
(fuzz/campaign/workers.py). Use them as `fuzz.judge.faults:NAME`. Each runs the graph eagerly
(like the "eager" backend) unless an input dim exceeds THRESHOLD at run time;
then it misbehaves the way a broken compiler can: it kills its process, hangs,
runs out of memory, reports a poisoned CUDA context (cuda_error, a message
only) or really poisons it (device_assert, on a GPU).

Never call these in the fuzzer's own process: they are meant for a worker.
"""

from __future__ import annotations

import os
import resource
import signal
import time

THRESHOLD = 4
CUDA_MESSAGE = ("CUDA error: an illegal memory access was encountered\n"
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                "below might be incorrect.")
MEMORY_CAP = 1 << 30  # bytes the allocator may take before it gives up: safe on a shared machine
_CHUNK = 32 << 20


def _large(args) -> bool:
    return any(n > THRESHOLD for a in args for n in getattr(a, "shape", ()))


def _faulty(fault):
    """A backend that runs the graph, calling fault(args) first on large inputs."""
    def backend(gm, example_inputs):
        def run(*args):
            if _large(args):
                fault(args)
            return gm(*args)
        return run
    backend.__doc__ = fault.__doc__
    return backend


def _segfault(args):
    """SIGSEGV, as a bad kernel's memory access would."""
    os.kill(os.getpid(), signal.SIGSEGV)


def _abort(args):
    """SIGABRT, as a failed C++ assertion would."""
    os.kill(os.getpid(), signal.SIGABRT)


def _sigkill(args):
    """SIGKILL, as the kernel's OOM killer would."""
    os.kill(os.getpid(), signal.SIGKILL)


def _hang(args):
    """Sleeps forever, as a deadlocked or endlessly looping kernel would."""
    while True:
        time.sleep(3600)


def _cuda_error(args):
    """The error torch raises after an illegal memory access on a GPU."""
    raise RuntimeError(CUDA_MESSAGE)


def _device_assert(args):
    """On CUDA a real device-side assert (an out-of-range index), which poisons
    the CUDA context; on CPU the same indexing raises IndexError."""
    import torch

    t = next(a for a in args if isinstance(a, torch.Tensor))
    t.reshape(-1)[torch.tensor([t.numel() + 100], device=t.device)]
    if t.is_cuda:
        torch.cuda.synchronize()


def _allocate(args):
    """Allocates until the allocator fails, then raises MemoryError. The
    address-space limit is lowered first (and restored after) so that the
    failure comes within MEMORY_CAP bytes, never from the machine's OOM killer."""
    old = resource.getrlimit(resource.RLIMIT_AS)
    vm = _vm_size()
    if vm:
        soft = vm + MEMORY_CAP // 2
        if old[1] != resource.RLIM_INFINITY:
            soft = min(soft, old[1])
        resource.setrlimit(resource.RLIMIT_AS, (soft, old[1]))
    hoard = []
    try:
        while len(hoard) * _CHUNK < MEMORY_CAP:
            hoard.append(bytearray(_CHUNK))  # zero-filled: the pages are really touched
    except MemoryError:
        pass
    finally:
        hoard.clear()
        resource.setrlimit(resource.RLIMIT_AS, old)
    raise MemoryError("fuzz.judge.faults:memory ran out of memory")


def _vm_size() -> int:
    """This process's virtual memory size in bytes (Linux), else 0."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


segfault = _faulty(_segfault)
abort = _faulty(_abort)
sigkill = _faulty(_sigkill)
hang = _faulty(_hang)
cuda_error = _faulty(_cuda_error)
memory = _faulty(_allocate)
device_assert = _faulty(_device_assert)

FAULTS = ("segfault", "abort", "sigkill", "hang", "cuda_error", "memory", "device_assert")
