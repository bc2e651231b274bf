"""How many sandboxed workers a machine gets, and the threads each may use.

The default is one worker per usable CPU (os.sched_getaffinity: what this
process may run on, not what the machine has), shared round-robin across the
GPUs when the campaign runs on CUDA. Each worker compiles with one Inductor
thread (TORCHINDUCTOR_COMPILE_THREADS=1: parallel compilation in every
worker would oversubscribe the CPUs, and its subprocess pool costs more than
it saves on small kernels) and runs torch's intra-op pool on its share of the
CPUs (OMP_NUM_THREADS = max(1, cpus // workers)). A variable the user set in
the environment is left alone, and so is an explicit --workers or
--workers-per-gpu. Measured on a 16-CPU H100 box: 16 workers with one
compile thread each judged 6.18 cases/s, one worker 0.68.

Imports no torch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

COMPILE_THREADS = "TORCHINDUCTOR_COMPILE_THREADS"
OMP_THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask; cgroup-pinned containers too)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Sizing:
    """The workers of a pool and the environment each gets beyond the parent's."""

    workers: int  # 0: judge in this process
    cpus: int
    devices: list | None = None  # CUDA indices the workers are spread over
    env: dict = field(default_factory=dict)  # set in every worker (what the user did not set)
    why: str = "default"  # where the worker count came from

    def threads(self, name: str) -> str:
        """The value `name` has in a worker: ours, the user's, or torch's default."""
        if name in self.env:
            return self.env[name]
        return f"{os.environ[name]} (set)" if name in os.environ else "torch default"

    def line(self) -> str:
        """One line naming every choice, for the start of `shapefuzz run`."""
        if self.workers == 0:
            return (f"workers=0 (judged in this process, no sandbox; --workers 0), cpus={self.cpus}, "
                    f"devices={_devices(self.devices)}")
        per_gpu = ""
        if self.devices:
            n = len(self.devices)
            per_gpu = f", {self.workers / n:g} per GPU" if self.workers % n == 0 else f", ~{self.workers / n:.1f} per GPU"
        return (f"workers={self.workers} ({self.why}; {self.cpus} usable CPUs{per_gpu}), "
                f"compile threads={self.threads(COMPILE_THREADS)} per worker, "
                f"omp threads={self.threads(OMP_THREADS[0])} per worker, devices={_devices(self.devices)}")


def _devices(devices) -> str:
    return "cpu" if not devices else "cuda:" + ",".join(str(d) for d in devices)


def size_pool(workers: int | None = None, devices: list | None = None, workers_per_gpu: int | None = None, *,
              cpus: int | None = None, environ=None) -> Sizing:
    """The workers and their thread settings: `workers` when given (0: in this
    process), else `workers_per_gpu` x the GPUs when both are given, else one
    per usable CPU (at least one per GPU)."""
    environ = os.environ if environ is None else environ
    cpus = cpus or usable_cpus()
    devices = list(devices) if devices else None
    if workers is not None:
        why = "--workers"
    elif devices and workers_per_gpu:
        workers, why = len(devices) * workers_per_gpu, "--workers-per-gpu"
    else:
        workers, why = max(cpus, len(devices or ())), "default: one per usable CPU"
    env = {}
    if workers > 0:
        if COMPILE_THREADS not in environ:
            env[COMPILE_THREADS] = "1"
        omp = str(max(1, cpus // workers))
        env.update({name: omp for name in OMP_THREADS if name not in environ})
    return Sizing(workers=workers, cpus=cpus, devices=devices, env=env, why=why)


def drawing_processes(cpus: int | None = None) -> int:
    """Processes that draw a campaign's programs: none (a thread of the driver)
    under 16 CPUs, where one thread outdraws the workers (about 50 programs a
    second on one core); else one, and one more per 32 CPUs, so that the
    driver's event loop keeps its core (fuzz/campaign/generate.py BatchDrawers)."""
    cpus = cpus or usable_cpus()
    return 0 if cpus < 16 else 1 + cpus // 32
