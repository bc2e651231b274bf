"""A fork server for standalone scripts: a process that has imported torch,
Dynamo and Inductor once, and forks a child for each script to run.

Why: on a 16-CPU GPU box a fresh `python repro.py` spends about 15 of its
16 CPU-seconds importing torch, Dynamo and Inductor (measured, torch 2.11 +
CUDA), and a shrink's standalone check is one such process per entry. A
child forked from here starts where that import ended, and is otherwise as
fresh as `python repro.py`: no compile has run in it, CUDA is initialised in
the child (never here), its caches are the ones its environment names.

Only scripts whose environment differs from this server's in variables read
after import (LAZY), or set again in the child (REAPPLIED), may run here; any other difference (an Inductor option
set by environment, TORCH_TRACE, another interpreter) runs in a fresh process
(`run` returns None, and isolated.run_script falls back). The server ends
with the process that started it.

    python -m fuzz.judge.zygote SOCKET     (started by `start`, not by hand)
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

ENV = "SHAPEFUZZ_ZYGOTE"  # the server's socket path, for the processes under the runner that started it
PRELOAD = ("torch", "torch._dynamo", "torch._inductor.compile_fx")
# read when a compile needs them, not at import: a script may differ from the server in these
# (pytest names the running test in PYTEST_CURRENT_TEST: repros run as tests, and the test suite's own checks;
# Inductor sets _TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR in a process that loaded a compiled C++ module, and sets
# it again before each load: a process that compiled hands it on to every script it starts)
LAZY = frozenset({"TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TMPDIR", "PYTHONPATH", "PYTHONUNBUFFERED",
                  "PWD", "OLDPWD", "PYTEST_CURRENT_TEST", "_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR", ENV})
# read at import, but set again in the child from its environment (_reapply), where the script's names them
REAPPLIED = frozenset({"TORCHINDUCTOR_COMPILE_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"})
_MAX_REQUEST = 1 << 20
# A script asked for while this process's `start` is under way waits for it, up to this long: a fresh process
# would pay the same import the zygote is part-way through (on 2 CPUs beside a campaign's cases, a start took
# 16 s, and the three shrink jobs asked for in that time each imported torch again).
START_WAIT = 60.0
_no_start_under_way = threading.Event()
_no_start_under_way.set()


def differing(base: dict, env: dict) -> list[str]:
    """The variables `env` sets otherwise than `base` that a child of a server started with `base` cannot take
    on: neither LAZY nor REAPPLIED (a REAPPLIED one only where `env` sets it)."""
    return sorted(k for k in set(base) | set(env) if base.get(k) != env.get(k) and k not in LAZY
                  and not (k in REAPPLIED and k in env))


def _reapply(env: dict) -> None:
    """What a fresh process would have read at import from `env`: Inductor's compile threads, torch's threads."""
    import torch
    import torch._inductor.config as inductor_config

    if "TORCHINDUCTOR_COMPILE_THREADS" in env:
        inductor_config.compile_threads = inductor_config.decide_compile_threads()
    threads = env.get("OMP_NUM_THREADS") or env.get("MKL_NUM_THREADS")
    if threads and threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))


# ---- the server ------------------------------------------------------------------------------------------

def serve(path: str) -> None:
    # nothing here may initialise CUDA (a forked child could not use it): ask NVML, should an import ask at all
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    for name in PRELOAD:
        __import__(name)
    del os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"]
    from fuzz import heap

    heap.freeze_imports()  # every child starts with the imports out of its collections' way
    base = dict(os.environ)  # after the imports: what they set, every child has too
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while os.getppid() == parent and os.path.exists(path):
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                pid = _start(conn, base)
                if pid is None:
                    conn.close()
                else:
                    children[pid] = conn
        _reap(children)
    for pid in children:  # the runner is gone: so are its scripts
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    _remove(path)


def _remove(path: str) -> None:
    """The socket and the dir `start` made for it."""
    for remove in (os.unlink, os.rmdir):
        try:
            remove(path)
        except OSError:
            pass
        path = os.path.dirname(path)


def _start(conn: socket.socket, base: dict) -> int | None:
    """Read one request (JSON and two descriptors, the script's stdout and stderr), fork its child; its pid."""
    fds: list = []
    try:
        conn.settimeout(10)
        msg, fds, _, _ = socket.recv_fds(conn, _MAX_REQUEST, 2)
        while not msg.endswith(b"\n") and len(msg) < _MAX_REQUEST:  # a stream: the request may come in parts
            more = conn.recv(_MAX_REQUEST)
            if not more:
                break
            msg += more
        req = json.loads(msg.decode())
        script, cwd, env = str(req["script"]), str(req["cwd"]), {str(k): str(v) for k, v in req["env"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        _send(conn, {"error": f"bad request: {e}"})
        for fd in fds:
            os.close(fd)
        return None
    try:
        if len(fds) != 2:
            _send(conn, {"error": "a request passes the script's stdout and stderr"})
            return None
        differ = differing(base, env)
        if differ:
            _send(conn, {"error": f"its environment differs in variables read at import: {differ[:8]}"})
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            conn.close()
            _child(script, cwd, env, fds)  # never returns
        _send(conn, {"pid": pid})
        return pid
    finally:
        for fd in fds:
            os.close(fd)


def _reap(children: dict) -> None:
    while children:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            _send(conn, {"rc": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime})
            conn.close()


def _send(conn: socket.socket, doc: dict) -> None:
    try:
        conn.sendall(json.dumps(doc).encode() + b"\n")
    except OSError:
        pass  # the client gave up (its timeout): nothing to tell


def _child(script: str, cwd: str, env: dict, fds) -> None:
    """Become `python SCRIPT` run in `cwd` with `env`: exit as that would (0, SystemExit's code, 1 and the
    traceback on an exception)."""
    code = 1
    try:
        os.setsid()  # a group of its own: a timeout kills it with what it started
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        import tempfile

        tempfile.tempdir = None  # TMPDIR is read again
        _reapply(env)
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [os.path.dirname(os.path.abspath(script))] + extra + [p for p in sys.path[1:] if p not in extra]
        sys.argv = [script]
        code = _run_as_main(script)
    finally:
        try:
            import atexit

            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _run_as_main(script: str) -> int:
    import runpy

    try:
        runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException as e:  # noqa: BLE001 - reported as an uncaught exception would be
        tb = e.__traceback__
        target = os.path.abspath(script)
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != target:
            tb = tb.tb_next  # the traceback starts at the script, as python's would
        if tb is not None:
            e.with_traceback(tb)  # the hook prints the exception's own traceback
        sys.excepthook(type(e), e, e.__traceback__)
        return 1


# ---- the client ------------------------------------------------------------------------------------------

class Server:
    """A zygote started by this process (`start`): its socket is in os.environ[ENV] for our children."""

    def __init__(self, path: str, proc: subprocess.Popen):
        self.path, self.proc = path, proc

    def stop(self) -> None:
        if os.environ.get(ENV) == self.path:
            del os.environ[ENV]
        self.proc.kill()
        self.proc.wait()
        _remove(self.path)


def expected() -> bool:
    """Whether `run` may find a zygote: one is named, or this process is starting one."""
    return bool(os.environ.get(ENV)) or not _no_start_under_way.is_set()


def start_in_background(env: dict):
    """`start` in a thread of its own; scripts asked for meanwhile wait for it (`run`). Returns a Future of
    its Server (or None)."""
    from concurrent.futures import Future

    started = Future()

    def go():
        try:
            started.set_result(start(env))
        except BaseException as e:  # noqa: BLE001 - the caller's to see; scripts run fresh meanwhile
            started.set_exception(e)

    _no_start_under_way.clear()  # now, not when the thread gets going
    threading.Thread(target=go, daemon=True, name="shapefuzz-zygote-start").start()
    return started


def start(env: dict, *, timeout: float = 180.0) -> Server | None:
    """Start a zygote whose children get `env` (what the scripts it runs will differ from only in LAZY), and
    name it in os.environ[ENV]; None where it did not come up (scripts then run in fresh processes)."""
    _no_start_under_way.clear()
    try:
        return _start_server(env, timeout)
    finally:
        _no_start_under_way.set()


def _start_server(env: dict, timeout: float) -> Server | None:
    import tempfile

    d = tempfile.mkdtemp(prefix="shapefuzz-zygote-")
    path = os.path.join(d, "socket")
    env = {k: v for k, v in env.items() if k != ENV}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.Popen([sys.executable, "-m", "fuzz.judge.zygote", path], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout) or proc.stdout.readline().strip() != "ready":
        proc.kill()
        proc.wait()
        _remove(path)
        return None
    os.environ[ENV] = path
    return Server(path, proc)


def run(script: str, *, cwd: str, env: dict, timeout: float) -> tuple[int | None, str, str, float] | None:
    """Run `script` in a child of the zygote os.environ[ENV] names: (exit code or None past `timeout`, stdout,
    stderr, its CPU-seconds); None where no zygote may run it (none named, gone, or `env` differs from its
    own in a variable read at import)."""
    import tempfile

    path = os.environ.get(ENV)
    if not path and not _no_start_under_way.is_set():
        _no_start_under_way.wait(min(START_WAIT, timeout))
        path = os.environ.get(ENV)
    if not path:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    outs = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]  # files, not pipes: nothing blocks the child
    try:
        conn.connect(path)
        conn.settimeout(30)
        request = json.dumps({"script": script, "cwd": cwd, "env": env}).encode() + b"\n"
        sent = socket.send_fds(conn, [request], [f.fileno() for f in outs])
        conn.sendall(request[sent:])
        reader = conn.makefile("r")
        first = json.loads(reader.readline() or "{}")
        if "pid" not in first:
            if os.environ.get("SHAPEFUZZ_ZYGOTE_DEBUG"):
                print(f"zygote: {first.get('error')}", file=sys.stderr)
            return None
        pid, deadline = first["pid"], time.monotonic() + timeout
        result: dict = {}

        def wait():
            conn.settimeout(None)
            line = reader.readline()
            result.update(json.loads(line) if line else {})

        t = threading.Thread(target=wait, daemon=True)
        t.start()
        t.join(max(0.0, deadline - time.monotonic()))
        timed_out = t.is_alive()
        if timed_out:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            t.join(10)
        if "rc" not in result:
            return None if not timed_out else (None, *_read(outs), 0.0)
        return (None if timed_out else int(result["rc"])), *_read(outs), float(result.get("cpu", 0.0))
    except (OSError, ValueError):
        return None
    finally:
        conn.close()
        for f in outs:
            f.close()


def _read(outs) -> tuple[str, str]:
    texts = []
    for f in outs:
        f.seek(0)
        texts.append(f.read().decode(errors="replace"))
    return texts[0], texts[1]


if __name__ == "__main__":
    serve(sys.argv[1])
