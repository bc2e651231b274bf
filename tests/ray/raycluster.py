"""A real Ray cluster of several nodes on this machine, for the --ray tests:
a head and worker nodes, each started with `ray start` in a session of its
own, so that one node can be killed (its raylet, agents and actors: the whole
process group) as a lost machine would be, and every node is stopped at the
end without touching any other Ray on the machine."""

import atexit
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAY = os.path.join(os.path.dirname(sys.executable), "ray")


_TOKEN_DIR = tempfile.mkdtemp(prefix="sfraytok")
atexit.register(shutil.rmtree, _TOKEN_DIR, True)
TOKEN = os.path.join(_TOKEN_DIR, "auth_token")
with open(TOKEN, "w") as _f:
    _f.write(secrets.token_hex(32))  # the tests' clusters use token authentication, with a token of their own


def env():
    return dict(os.environ, PYTHONPATH=ROOT, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token",
                RAY_AUTH_TOKEN_PATH=TOKEN)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """`ray start` nodes on 127.0.0.1 under a temp dir of their own."""

    def __init__(self):
        self.temp = tempfile.mkdtemp(prefix="sfray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.groups: dict[str, int] = {}  # node name -> its process group

    def _start(self, name: str, args: list) -> None:
        proc = subprocess.Popen([RAY, "start", "--node-ip-address=127.0.0.1", "--disable-usage-stats"] + args,
                                env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        self.groups[name] = proc.pid  # its daemons keep the group after `ray start` returns
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out[-3000:]

    def head(self, cpus: int = 1) -> None:
        self._start("head", ["--head", f"--port={self.port}", f"--num-cpus={cpus}", "--include-dashboard=false",
                             f"--temp-dir={self.temp}"])

    def worker(self, name: str, cpus: int = 1) -> None:
        self._start(name, [f"--address={self.address}", f"--num-cpus={cpus}"])

    def wait_nodes(self, n: int, timeout: float = 60.0) -> None:
        """Until the head knows n alive nodes (asked from a subprocess: this process stays off Ray)."""
        code = (f"import ray; ray.init(address={self.address!r}, logging_level='ERROR'); "
                "print(sum(n['Alive'] for n in ray.nodes()))")
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True, timeout=120)
            if r.returncode == 0 and r.stdout.strip() == str(n):
                return
            time.sleep(1.0)
        raise AssertionError(f"the cluster did not reach {n} nodes: {r.stdout} {r.stderr[-2000:]}")

    def node_id(self, name: str) -> str:
        """The Ray node id of node `name` (its raylet's --node_id)."""
        for pid, (_, group) in _procs().items():
            if group == self.groups[name]:
                try:
                    args = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace").split("\0")
                except OSError:
                    continue
                if args and args[0].endswith("/raylet"):
                    return next(a.split("=", 1)[1] for a in args if a.startswith("--node_id="))
        raise AssertionError(f"no raylet for node {name}")

    def kill(self, name: str) -> None:
        """The node is lost: SIGKILL to everything it started -- its process group (raylet,
        agents) and every descendant (its Ray workers, in groups of their own: the actors
        and their sandboxed workers)."""
        pgid = self.groups.pop(name)
        doomed = _tree({pid for pid, (_, group) in _procs().items() if group == pgid})
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        for name in list(self.groups)[::-1]:
            self.kill(name)
        time.sleep(0.5)
        shutil.rmtree(self.temp, ignore_errors=True)


def _procs() -> dict:
    """pid -> (ppid, pgid) of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
                out[int(d)] = (int(fields[1]), int(fields[2]))
            except (OSError, IndexError, ValueError):
                pass
    return out


def _tree(roots: set) -> set:
    """roots and all their descendants."""
    procs, found = _procs(), set(roots)
    while True:
        more = {pid for pid, (ppid, _) in procs.items() if ppid in found} - found
        if not more:
            return found
        found |= more
