"""Where a campaign's cases are judged, behind one interface for the driver
(fuzz/campaign/driver.py): sandboxed workers on this machine (workers.py),
workers on every node of a Ray cluster (cluster/pool.py), or this process
(--workers 0: no sandbox).

An executor's run(cases) yields (case index, verdict dict, info) as cases
complete; after_case(state) copies what the state keeps of it (worker
restarts, the Ray nodes); balance(followups) lends CPUs to the follow-up jobs
running; close() ends its workers and after_close(state) records what
closing settled."""

from __future__ import annotations

import os

from fuzz.judge.coverage import ENV as ENV_COVERAGE


class InProcess:
    """--workers 0: judged in the driver's process, one at a time."""

    def __init__(self, kind, confirmed: set):
        self.kind, self.confirmed = kind, confirmed

    def run(self, cases):
        return self.kind.in_process(cases, confirmed=self.confirmed)

    def after_case(self, state) -> None:
        pass

    def balance(self, followups) -> None:
        pass

    def close(self) -> None:
        pass

    def after_close(self, state) -> None:
        pass


class LocalWorkers:
    """A WorkerPool on this machine; the CPUs of the follow-up jobs running come out of its workers."""

    def __init__(self, pool, cpus: int, restarts_before):
        self.pool, self.cpus = pool, cpus
        self.restarts_before = restarts_before.copy()  # of earlier sessions, to which this one's add

    def run(self, cases):
        return self.pool.run(cases)

    def after_case(self, state) -> None:
        state.restarts = self.restarts_before + self.pool.restarts

    def balance(self, followups) -> None:
        from fuzz.campaign.followups.local import workers_to_pause

        self.pool.paused = workers_to_pause(self.pool.workers, self.cpus, followups.running())

    def close(self) -> None:
        self.pool.close()

    def after_close(self, state) -> None:
        pass


class RayWorkers(LocalWorkers):
    """A RayPool: a WorkerPool on each node; the follow-ups compute on the cluster, lending nothing here."""

    def after_case(self, state) -> None:
        super().after_case(state)
        state.nodes = self.pool.node_summary()

    def balance(self, followups) -> None:
        pass

    def after_close(self, state) -> None:
        state.nodes = self.pool.node_summary()


def open_executor(cfg, kind, state, *, cluster, disk, confirmed: set, cpus: int, note):
    """The executor cfg asks for: Ray with a cluster, else workers, else (--workers 0) this process.
    confirmed: the recorder's confirmed signature keys (read by the workers at each case)."""
    if cluster is not None:
        from fuzz.campaign.cluster.pool import RayPool

        return RayWorkers(RayPool(cluster, kind=kind, timeout=cfg.timeout, workers=cfg.workers,
                                  workers_per_gpu=cfg.workers_per_gpu, cuda=cfg.on_cuda(), env=kind.worker_env(),
                                  recycle_after=kind.recycle_after, note=note), cpus,
                          state.restarts)
    if cfg.workers <= 0:
        return InProcess(kind, confirmed)
    from fuzz.campaign.workers import WorkerPool

    coverage = {ENV_COVERAGE: "1"} if cfg.coverage or cfg.guided else {}
    pool = WorkerPool(workers=cfg.workers, devices=cfg.devices, workers_per_gpu=cfg.workers_per_gpu,
                      timeout=cfg.timeout, workdir=os.path.join(cfg.state_dir, "workers"), kind=kind,
                      recycle_after=kind.recycle_after, env={**(kind.worker_env() or {}), **disk.compiling, **coverage},
                      similar=kind.similar_key, cache_limit=disk.workers_share, rerun_cold_hangs=True, note=note)
    pool.confirmed = confirmed
    return LocalWorkers(pool, cpus, state.restarts)
