"""One Ray node's share of a campaign: the actor the driver
(fuzz/campaign/cluster/pool.py) places on each node, owning a local sandboxed
WorkerPool sized to that node.

The actor holds no state worth keeping: it judges the cases it is sent and
hands back their verdicts. The driver keeps the state, the corpus and the
list of cases in flight on every node, so a node lost mid-case costs only the
time of its cases, which go to another node.

Its one call, exchange(), is submit-then-collect: the driver keeps one call
outstanding per node, each bringing new cases and returning whatever
completed meanwhile (waiting up to `wait` seconds for a first result). The
pool runs only inside a call, so the actor needs no thread of its own; each
of its workers holds a queued case beside its running one, so the round trip
between two calls costs no worker time.

Imports no torch and no Ray at module level (the actor class is made
remote by the driver).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading


class NodeJudge:
    """A WorkerPool on this node: `workers` sandboxed workers (pinned round-robin
    to `devices`, CUDA indices of this node, as on one machine)."""

    def __init__(self, workers: int, devices: list | None, timeout: float, kind: str, env: dict | None,
                 recycle_after: int | None, threads: int | None = None):
        from fuzz.campaign.workers import WorkerPool
        from fuzz.kinds import named

        _spawn_without_ray()
        # the workdir (Inductor and Triton caches, worker logs) is local to the node: a temp dir the pool removes
        self.pool = WorkerPool(workers=workers, devices=devices, timeout=timeout, kind=named(kind),
                               recycle_after=recycle_after, env=env, threads=threads,
                               similar=named(kind).similar_key)
        self.env = None  # this node's torch / CUDA / GPU, for the env.json of the entries its cases make
        self._env_thread = threading.Thread(target=self._capture_env, name="shapefuzz-node-env", daemon=True)
        self._env_thread.start()

    def _capture_env(self) -> None:
        # in a child process: torch and CUDA stay out of this one (the workers are spawned from it)
        code = "import json; from fuzz.findings.store.corpus import capture_env; print(json.dumps(capture_env()))"
        try:
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
            env = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else None
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            env = None
        self.env = env if isinstance(env, dict) else {}

    def info(self) -> dict:
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(), "pid": os.getpid(),
                "workers": self.pool.workers, "sizing": self.pool.sizing.line()}

    def exchange(self, cases: list, wait: float) -> tuple[list, dict, dict | None]:
        """Queue `cases` ((case_id, program dict) pairs); return the results completed
        so far ((case_id, verdict dict, info) triples), the pool's worker restarts and
        the node's environment (None until known; known before the first result, when it can be)."""
        for case_id, program in cases:
            self.pool.submit(case_id, program)
        results = self.pool.collect(wait)
        if results and self.env is None:
            self._env_thread.join(60.0)
        return results, dict(self.pool.restarts), self.env

    def close(self) -> None:
        self.pool.close()


def _spawn_without_ray() -> None:
    """A spawned child re-imports its parent's __main__ (multiprocessing): in a Ray worker that is Ray's
    default_worker.py, so every sandboxed worker would import Ray (a second and ~50 MB more each). Under
    `python -m fuzz` it is fuzz.__main__, which multiprocessing does not re-import; name that here too."""
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None:
        main.__spec__ = importlib.util.find_spec("fuzz.__main__")
