"""A campaign's cases judged over a Ray cluster (`shapefuzz run --ray`).

The driver (fuzz/campaign/driver.py) is unchanged in what it owns: it
generates the programs from the seed, in order, and writes the state and the
corpus; only where a case is judged changes. RayPool offers it what the local
WorkerPool does -- run(cases) yields (case_id, verdict dict, info) as cases
complete, `restarts`, close() -- and puts one NodeJudge actor
(fuzz/campaign/cluster/node.py) on every node of the cluster, each with a
sandboxed WorkerPool sized to its node: as many workers as the node offers
Ray CPUs (`ray start --num-cpus`), or on CUDA its Ray GPUs x --workers-per-gpu,
pinned to the GPUs as on one machine; --workers N sets N per node. A node
started with `--num-cpus 0` (a head kept for the driver) judges nothing.

Since a case is the same program whichever node judges it, a seed gives the
same cases and verdicts as without Ray. The driver keeps the cases in flight
on each node; when a node is lost (its actor dies, its raylet is killed, the
machine goes away) they go back to the head of the queue and another node
judges them, so no case is lost and none is recorded twice (results come
back only through the driver's calls, and a lost call returns nothing). A
case whose node is lost MAX_LOSSES times is recorded as a crash, not retried
for ever. Nodes that join mid-campaign are used from the next discovery.

Imports Ray only in functions: without the `ray` extra the rest of shapefuzz
never sees it.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
from collections import Counter, deque
from dataclasses import dataclass, field

INSTALL = "pip install -e '.[ray]'"
MAX_LOSSES = 3  # a case whose node is lost this many times is a crash verdict
WAIT = 1.0  # seconds a node's exchange() waits for a first result (its heartbeat)
DISCOVER_EVERY = 5.0  # seconds between looks for nodes that joined
COOLDOWN = 30.0  # seconds before a node whose actor was lost gets another (Ray may not know it is gone yet)
NODE_WAIT = 60.0  # seconds to wait for a node when none is left, before giving up
STUCK = 600.0  # seconds a node may take to answer (its actor's start included) before it counts as lost
_ADDRESS = re.compile(r"^([A-Za-z0-9_.\-]+|\[[0-9A-Fa-f:]+\]):(\d{1,5})$")


class RayError(RuntimeError):
    """Ray is missing, the cluster cannot be reached, or it cannot run the campaign (one line)."""


def missing() -> str | None:
    """Why --ray cannot run in this Python (no Ray), with the fix; None when it can."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return f"--ray needs Ray, which this Python does not have: {INSTALL}"
    return None


def bad_address(address: str | None) -> str | None:
    """Why `address` names no cluster shapefuzz can join; None for local, auto (None) or HOST:PORT."""
    if address in (None, "local", "auto"):
        return None
    if address.startswith("ray://"):
        return (f"--ray {address}: Ray Client addresses are not supported; run shapefuzz on a machine of the "
                "cluster (one that ran `ray start`) with --ray HOST:PORT of the head")
    m = _ADDRESS.match(address)
    if not m or not 0 < int(m.group(2)) < 65536:
        return (f"--ray {address}: not a cluster address; use HOST:PORT (the head's `ray start --head --port`), "
                "local (a Ray started in this process) or nothing (RAY_ADDRESS, or the cluster started here)")
    return None


@dataclass
class Cluster:
    """A connection to Ray, made before the campaign opens its state dir."""

    address: str  # as given: local, auto, HOST:PORT
    gcs: str  # the cluster's GCS address (what a second process joins with)

    def close(self) -> None:
        import ray

        ray.shutdown()  # a `local` cluster ends here; a real one only loses this driver


def connect(address: str | None) -> Cluster:
    """Join the cluster at `address` (None: RAY_ADDRESS or the one `ray start` made
    on this machine; "local": start one in this process). RayError when Ray is
    missing or nothing answers there."""
    why = missing() or bad_address(address)
    if why:
        raise RayError(why)
    m = _ADDRESS.match(address or "")
    if m:  # HOST:PORT: a refused port fails here at once, not after Ray's minute of retries
        host, port = m.group(1).strip("[]"), int(m.group(2))
        try:
            socket.create_connection((host, port), timeout=5.0).close()
        except OSError as e:
            raise RayError(f"--ray {address}: no Ray head answers there ({e.strerror or e}); start one with "
                           f"`ray start --head --port={port}`") from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # nothing leaves the cluster
    import ray

    kwargs = dict(logging_level=logging.WARNING, log_to_driver=False, namespace="shapefuzz")
    if address == "local":
        from fuzz.campaign.sizing import usable_cpus

        # (ERROR: Ray warns that it turned token authentication on, its default for a new local cluster)
        kwargs.update(address="local", num_cpus=usable_cpus(), include_dashboard=False, logging_level=logging.ERROR)
    else:
        kwargs.update(address=address or "auto")
    try:
        ray.init(**kwargs)
    except Exception as e:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError, ...
        raise RayError(f"--ray {address or 'auto'}: cannot join the cluster: "
                       f"{(str(e).strip().splitlines() or [type(e).__name__])[0]}") from None
    return Cluster(address=address or "auto", gcs=ray.get_runtime_context().gcs_address)


@dataclass
class _Node:
    node_id: str
    name: str
    actor: object
    address: str = "?"
    ref: object = None  # the call outstanding: info() until ready, then exchange()
    sent: float = 0.0  # when it was made (monotonic)
    ready: bool = False
    workers: int = 0
    target: int = 0  # cases kept on it: one running and one queued per worker
    in_flight: dict = field(default_factory=dict)  # case_id -> program dict
    cases: int = 0
    started: float = 0.0  # when it became ready (monotonic)
    ended: float | None = None  # when it was lost or closed
    lost: bool = False
    restarts: dict = field(default_factory=dict)  # of its WorkerPool, cumulative
    env: dict | None = None  # its torch / CUDA / GPU (fuzz.findings.store.corpus.capture_env), once known


class RayPool:
    """The case stream sharded over the nodes of a Ray cluster (see the module doc).

    workers: per node (None: its Ray CPUs, or on CUDA its GPUs x workers_per_gpu
    when that is given). cuda: pin workers to the node's GPUs; nodes without one
    judge nothing. note(text): where node events are told (a node up, lost)."""

    def __init__(self, cluster: Cluster, *, kind, timeout: float, workers: int | None = None,
                 workers_per_gpu: int | None = None, cuda: bool = False, env: dict | None = None,
                 recycle_after: int | None = 200, note=print):
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from fuzz.campaign.cluster.node import NodeJudge

        self._ray, self._affinity = ray, NodeAffinitySchedulingStrategy
        self._actor_class = ray.remote(NodeJudge)
        self.cluster = cluster
        self.kind, self.timeout, self.env, self.recycle_after = kind, timeout, env, recycle_after
        self.workers, self.workers_per_gpu, self.cuda = workers, workers_per_gpu, cuda
        self.note = note
        self.nodes: dict[str, _Node] = {}  # every node used this session, lost ones too
        self._requeue: deque = deque()  # (case_id, program) of lost nodes, judged before new cases
        self._losses: Counter = Counter()  # case_id -> times its node was lost
        self._node_losses: Counter = Counter()  # node_id -> actors lost on it
        self._lost_at: dict = {}  # node_id -> when its last actor was lost
        self._last_discovery = 0.0
        self.lost_nodes = 0
        self.completed = 0
        self._closed = False
        self._discover()
        if not self.nodes:
            raise RayError(self._no_nodes_why())

    # -- nodes --------------------------------------------------------------------------

    def _size(self, resources: dict) -> tuple[int, list | None]:
        """(workers, CUDA indices) for a node with these Ray resources; 0 workers: unused."""
        cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
        if self.cuda:
            if not gpus:
                return 0, None
            devices = list(range(gpus))
            if self.workers is not None:
                return self.workers, devices
            return (gpus * self.workers_per_gpu if self.workers_per_gpu else max(cpus, gpus)), devices
        return (self.workers if self.workers is not None and cpus else cpus), None

    def _sizing(self, node: _Node, info: dict) -> str:
        why = "--workers per node" if self.workers is not None else (
            "--workers-per-gpu x its Ray GPUs" if self.cuda and self.workers_per_gpu else "its Ray CPUs")
        return info["sizing"].replace("(--workers;", f"({why};", 1)

    def _no_nodes_why(self) -> str:
        what = "a GPU (`ray start --num-gpus N`)" if self.cuda else "a CPU (`ray start --num-cpus N`, N >= 1)"
        return f"--ray {self.cluster.address}: no node of the cluster offers {what}"

    def _discover(self) -> None:
        """Start an actor on every alive node that has none (new nodes, or one whose actor
        was lost a while ago), unless its actors were lost MAX_LOSSES times."""
        self._last_discovery = time.monotonic()
        for n in self._ray.nodes():
            nid = n["NodeID"]
            if not n.get("Alive") or (nid in self.nodes and self.nodes[nid].ended is None):
                continue
            if self._node_losses[nid] >= MAX_LOSSES or time.monotonic() - self._lost_at.get(nid, -COOLDOWN) < COOLDOWN:
                continue
            workers, devices = self._size(n.get("Resources", {}))
            if workers < 1:
                continue
            actor = self._actor_class.options(
                scheduling_strategy=self._affinity(nid, soft=False), num_cpus=0, max_restarts=0,
                max_concurrency=1).remote(workers, devices, self.timeout, self.kind.name, self.env,
                                          self.recycle_after)
            name = f"{n.get('NodeManagerHostname') or n.get('NodeManagerAddress')}:{nid[:6]}"
            node = _Node(node_id=nid, name=name, actor=actor, workers=workers, target=2 * workers,
                         address=n.get("NodeManagerAddress", "?"))
            node.ref, node.sent = actor.info.remote(), time.monotonic()
            self.nodes[nid] = node

    def _live(self) -> list[_Node]:
        return [n for n in self.nodes.values() if n.ended is None]

    def _lose(self, node: _Node, error: BaseException) -> None:
        """Its actor is gone: its cases go back to the queue (or, lost too often, become crashes)."""
        node.ended, node.ref, node.lost = time.monotonic(), None, True
        self.lost_nodes += 1
        self._node_losses[node.node_id] += 1
        self._lost_at[node.node_id] = time.monotonic()
        with_cases = f"; {len(node.in_flight)} case(s) in flight go to another node" if node.in_flight else ""
        why = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        self.note(f"ray: node {node.name} lost ({type(error).__name__}: {why}){with_cases}")
        for case_id, program in reversed(list(node.in_flight.items())):
            self._losses[case_id] += 1
            self._requeue.appendleft((case_id, program))
        node.in_flight.clear()
        try:
            self._ray.kill(node.actor, no_restart=True)  # a half-alive actor must not judge them too
        except Exception:  # noqa: BLE001 - already gone
            pass

    # -- the case stream ------------------------------------------------------------------

    def run(self, cases):
        """imap_unordered over the cluster: judge (case_id, program dict) pairs drawn lazily
        from `cases`; yield (case_id, verdict dict, info) as they complete, info naming
        the node (info["node"]) and its environment (info["env"]: the corpus's env.json; None if not known)."""
        ray = self._ray
        it = iter(cases)
        exhausted = False
        no_nodes_since = None
        while not self._closed:
            if time.monotonic() - self._last_discovery > DISCOVER_EVERY:
                self._discover()
            for node in self._live():
                if not node.ready or node.ref is not None:
                    continue
                give = []
                while len(node.in_flight) + len(give) < node.target:
                    if self._requeue:
                        give.append(self._requeue.popleft())
                        continue
                    if exhausted:
                        break
                    try:
                        give.append(next(it))
                    except StopIteration:
                        exhausted = True
                node.in_flight.update(give)
                if node.in_flight:
                    node.ref, node.sent = node.actor.exchange.remote(give, WAIT), time.monotonic()
            for case_id, program in list(self._requeue):  # lost too often: a crash verdict, not another node
                if self._losses[case_id] >= MAX_LOSSES:
                    self._requeue.remove((case_id, program))
                    yield case_id, _lost_verdict(self._losses[case_id]), {"node": None, "wall": None}
            refs = {n.ref: n for n in self._live() if n.ref is not None}
            if not refs:
                if exhausted and not self._requeue:
                    return
                if not self._live():  # every node lost: wait for one to come (back), then give up
                    no_nodes_since = no_nodes_since or time.monotonic()
                    if time.monotonic() - no_nodes_since > NODE_WAIT:
                        raise RayError(f"every node of the cluster is lost ({self.lost_nodes} lost this session); "
                                       "the state is saved: rerun the same command to resume")
                    time.sleep(1.0)
                    self._last_discovery = 0.0
                continue
            no_nodes_since = None
            for node in refs.values():  # alive to Ray but silent (a hung actor): its cases go elsewhere
                if time.monotonic() - node.sent > STUCK + self.timeout:
                    self._lose(node, TimeoutError(f"no answer in {STUCK + self.timeout:.0f} s"))
            refs = {r: n for r, n in refs.items() if n.ended is None}
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=DISCOVER_EVERY) if refs else ([], [])
            for ref in ready:
                node = refs[ref]
                node.ref = None
                try:
                    got = ray.get(ref)
                except ray.exceptions.RayError as e:
                    self._lose(node, e)
                    continue
                if not node.ready:  # info(): it is up
                    node.ready, node.started = True, time.monotonic()
                    self.note(f"ray: node {node.name} up ({got['host']}, {node.address}): {self._sizing(node, got)}")
                    continue
                results, node.restarts, env = got
                node.env = env or node.env
                for case_id, verdict, info in results:
                    if node.in_flight.pop(case_id, None) is None:
                        continue  # not ours any more (cannot happen: a node's results come only through here)
                    node.cases += 1
                    self.completed += 1
                    yield case_id, verdict, dict(info, node=node.name, env=node.env)

    # -- what the driver reads ---------------------------------------------------------------

    @property
    def restarts(self) -> Counter:
        total = Counter()
        for n in self.nodes.values():
            total.update(n.restarts)
        total["node-lost"] = self.lost_nodes
        return total

    def node_summary(self) -> dict:
        """name -> cases judged this session, cases/s while it was up, workers, up/lost."""
        now = time.monotonic()
        out = {}
        for n in self.nodes.values():
            if not n.ready and n.ended is not None:
                continue  # lost before it judged anything
            up = ((n.ended or now) - n.started) if n.ready else 0.0
            out[n.name] = {"cases": n.cases, "cases_per_second": round(n.cases / up, 4) if up > 0 else 0.0,
                           "workers": n.workers, "state": "lost" if n.lost else "up" if n.ended is None else "done"}
        return out

    def unfinished(self) -> list:
        return [c for n in self._live() for c in n.in_flight] + [c for c, _ in self._requeue]

    def close(self) -> None:
        """Stop every node's workers and its actor; cases in flight are dropped (judged on a resume)."""
        if self._closed:
            return
        self._closed = True
        live = self._live()
        closing = [n.actor.close.remote() for n in live]
        try:
            self._ray.wait(closing, num_returns=len(closing), timeout=10.0)
        except Exception:  # noqa: BLE001 - a node lost meanwhile
            pass
        for n in live:
            n.ended = time.monotonic()
            try:
                self._ray.kill(n.actor, no_restart=True)
            except Exception:  # noqa: BLE001
                pass


def _lost_verdict(times: int) -> dict:
    from fuzz.judge.verdict import Outcome, Stage, Verdict

    return Verdict(outcome=Outcome.CRASH, stage=Stage.PROCESS, exc_type="NodeLost",
                   message=f"the Ray node judging this case was lost {times} times (a case that takes its "
                           "node down, or a failing cluster)").to_dict()
