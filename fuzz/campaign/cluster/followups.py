"""Follow-up jobs (fuzz/campaign/followups/runner.py) computed on a Ray cluster, for
`shapefuzz run --ray` and `shapefuzz followup --ray`.

The corpus lives on the driver's disk, which the nodes do not share. So a
job is split where the work is: the entry's files are shipped to a Ray task
on whichever node has a CPU free, which computes on a private copy -- the
shrink (with the known minimal forms to settle onto, read on the driver), the
triage's ablation, the sanitizer run -- and sends back what it found; the
runner on the driver writes it into the corpus (Corpus.update_shrunk, then
the re-key and merge of fuzz/findings/dedupe.py; ablation.json;
sanitizer.txt). Several jobs run at once, one task each (up to the cluster's
CPUs); their corpus writes are serialized by the runner.

A task whose node is lost is retried by Ray on another node (TASK_RETRIES);
a job past its timeout is cancelled and failed, as the local runner's
supervisor does.

Imports Ray only in functions.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

TASK_RETRIES = 2  # a task's node lost: Ray runs it again elsewhere, this many times


def ship(entry_dir) -> dict:
    """The files an entry's follow-ups read (the top level; not variants/), name -> bytes."""
    from fuzz.datafile import read_bytes
    from fuzz.findings.store.corpus_files import KINDS, TEXT_KINDS
    from fuzz.program.schema import MAX_PROGRAM_BYTES

    caps = {**{k: v[1] for k, v in KINDS.items()}, **TEXT_KINDS}
    d = Path(entry_dir)  # each file through the one loader: a plain file, never a link, capped by its kind
    return {p.name: read_bytes(p, caps.get(p.name, MAX_PROGRAM_BYTES), follow_symlinks=False) for p in d.iterdir()
            if not p.name.startswith(".") and p.is_file() and not p.is_symlink()}


def compute(job_type: str, name: str, files: dict, params: dict, forms: list | None = None):
    """On a node: do the work of one job on a private copy of the entry; returns what the
    runner writes back (a ShrinkResult, an ablation document, a sanitizer report or None),
    with the node's id (its first 6 digits, as the campaign names nodes)."""
    import ray

    node = ray.get_runtime_context().get_node_id()[:6]
    return node, _compute(job_type, name, files, params, forms)


def _compute(job_type: str, name: str, files: dict, params: dict, forms: list | None):
    root = tempfile.mkdtemp(prefix="shapefuzz-followup-")
    try:
        entry = Path(root) / name
        entry.mkdir()
        for fname, data in files.items():
            (entry / fname).write_bytes(data)
        if job_type == "shrink":
            from fuzz.findings.store.corpus import Corpus
            from fuzz.kinds import kind_of

            program = Corpus(root).load(entry).program
            return kind_of(program).shrink_entry(entry, time_budget=float(params.get("budget", 300.0)),
                                                 reruns=params.get("reruns", 3), write=False,
                                                 timeout=float(params.get("timeout", 300.0)), onto=forms)
        if job_type == "triage":
            from fuzz.findings.triage import triage_entry

            return triage_entry(entry, timeout=float(params.get("timeout", 300.0)))
        if job_type == "sanitize":
            from fuzz.findings.sanitizer import sanitize_entry

            return sanitize_entry(str(entry), timeout=float(params["sanitizer_timeout"]))
        raise ValueError(f"unknown job type {job_type!r}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


class Remote:
    """The runner's handle on the cluster: runs a job's compute() as a task and waits for it
    with the runner's lock released, so that other jobs' corpus writes go on meanwhile."""

    where = "on the cluster"

    def __init__(self, address: str, log=print):
        self.log = log
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import logging

        import ray

        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False, namespace="shapefuzz")
        self._ray = ray
        # a shrink or triage judges one case at a time: one CPU (and a CUDA entry's one GPU, shared with the workers)
        self._task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(compute)
        self.lock = threading.Lock()  # held by the runner's threads except while a task runs

    def slots(self, pending: int = 0, draining: bool = True) -> int:
        """Jobs to run at once: the cluster's CPUs."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def run(self, job_type: str, entry_dir, params: dict, timeout: float, forms: list | None = None,
            gpu: bool = False):
        """compute() as a task (called with the lock held; released while it runs)."""
        name = Path(entry_dir).name
        ref = self._task.options(num_gpus=1 if gpu else 0).remote(job_type, name, ship(entry_dir), params, forms)
        self.lock.release()
        try:
            ready, _ = self._ray.wait([ref], timeout=timeout)
            if not ready:
                self._ray.cancel(ref, force=True)
                raise TimeoutError(f"timed out after {timeout:.0f} s (on the cluster)")
            node, result = self._ray.get(ref)
        finally:
            self.lock.acquire()
        self.log(f"    {job_type} of {name} computed on node {node}")
        return result

    def shrinker(self, job_timeout: float, gpu: bool = False):
        """A kind.shrink_entry for fuzz.findings.dedupe.settle that shrinks on the cluster and
        writes the result here."""
        def shrink_entry(entry_dir, *, time_budget, reruns, write, timeout, onto=None, **_):
            params = {"budget": time_budget, "reruns": reruns, "timeout": timeout}
            res = self.run("shrink", entry_dir, params, job_timeout, onto, gpu=gpu)
            if write and res.reproduced and res.verdict is not None:
                from fuzz.findings.store.corpus import Corpus

                Corpus(Path(entry_dir).parent).update_shrunk(entry_dir, res.program, res.verdict, res.stats())
            return res

        return shrink_entry

    def close(self) -> None:
        self._ray.shutdown()
