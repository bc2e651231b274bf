"""Judging in a fresh process, and reading a process that died.

`judge_in_subprocess` runs `python -m fuzz check PROGRAM --json --in-process` in a new
process group: a child killed by a signal becomes a CRASH verdict, one past
its time limit a HANG verdict, as the worker pool reports them. Replay, the
pytest corpus plugin and the compiled kind's isolated judging use it; the
worker pool shares the crash reading (faulthandler stacks, signal names).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

from fuzz.judge.verdict import Outcome, Stage, Verdict

_TAIL = 20
EXIT_SKIP = 77  # a repro.py that cannot run here (no such device or stack): skipped, not failed
_ROOT = Path(__file__).resolve().parents[2]  # holds the fuzz package


class JudgeError(Exception):
    """A program could not be judged in a fresh process; the message says why."""


def child_env(cache_dir: str | None, extra: dict | None = None) -> dict:
    """This process's environment for a fresh `python -m fuzz` or repro.py:
    the fuzz package importable, `extra` set (what the environment does not
    set already), a private Inductor cache when cache_dir is given."""
    env = dict(os.environ)
    for k, v in (extra or {}).items():
        env.setdefault(k, v)
    paths = [str(_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)  # custom module:attr backends, and `-m fuzz`
    if cache_dir:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    if "TMPDIR" not in (extra or {}):
        from fuzz import pch

        env["TMPDIR"] = pch.children_tmpdir()  # the kept precompiled header; nothing left in the system's
    env["PYTHONUNBUFFERED"] = "1"
    return env


def scratch_env(work, extra: dict | None = None) -> dict:
    """child_env with Inductor and Triton caches of its own under `work` (a
    scratch dir): the child sees no earlier compile, and writes nothing to the
    shared /tmp/torchinductor_<user> or ~/.triton."""
    env = child_env(os.path.join(str(work), "inductor"), extra)
    env["TRITON_CACHE_DIR"] = os.path.join(str(work), "triton")
    return env


def run_script(src: str, *, timeout: float, python: str | None = None, env: dict | None = None,
               force: dict | None = None, work=None, accept=None) -> tuple[int | None, str, str]:
    """Run script `src` as repro.py in a fresh process, in scratch dir `work`
    (default: a temporary one, removed after) with compile caches of its own
    there (scratch_env; `env`: variables this process's environment does not
    set already, `force`: variables set whatever it has), holding no more than
    the kernels a follow-up's shrink compiled (fuzz/judge/warm_kernels.py).
    Where a follow-up runner's zygote may run it, it runs there first; an
    answer `accept(rc, out, err)` refuses (default: any but a failure) is
    asked again of a fresh process. Returns run_command's (returncode or
    None, stdout, stderr)."""
    if work is None:
        with tempfile.TemporaryDirectory(prefix="shapefuzz-script-") as w:
            return run_script(src, timeout=timeout, python=python, env=env, force=force, work=w, accept=accept)
    (Path(work) / "repro.py").write_text(src)
    env = {**scratch_env(work, {**getattr(_checks, "env", {}), **(env or {})}), **(force or {})}
    from fuzz.judge.warm_kernels import seed

    seed(env, python)  # the kernels a follow-up's shrink just compiled, where it names them (content-addressed only)
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        got = _in_zygote(work, env, timeout, accept)
        if got is not None:
            return got
    return run_command([python or sys.executable, "repro.py"], timeout=timeout, env=env, cwd=work)


def _in_zygote(work, env: dict, timeout: float, accept) -> tuple[int | None, str, str] | None:
    """The script run in a child of the runner's zygote (fuzz/judge/zygote.py), where one runs it and `accept`
    takes its answer (default: it failed); else None, and the caller runs it in a fresh process. So a
    zygote can never make an entry pass: only a failure it shows is kept."""
    from fuzz import cputime
    from fuzz.judge import zygote

    with _lock_released():
        got = zygote.run(str(Path(work) / "repro.py"), cwd=str(work), env=env, timeout=timeout)
    if got is None:
        return None
    rc, out, err, cpu = got
    cputime.add("checks", cpu)
    ok = accept(rc, out, err) if accept is not None else rc not in (0, None)
    return (rc, out, err) if ok else None


_checks = threading.local()


@contextmanager
def checks_env(extra: dict):
    """While the block runs, this thread's scripts (run_script) also get `extra` where the environment does not
    set it: a follow-up runner's checks compile as its jobs do (one compile thread: a fresh process's default
    starts a pool of compile workers, each importing torch, for a few kernels; 10 CPU-s a check on the GPU box)."""
    before = getattr(_checks, "env", None)
    _checks.env = {**(before or {}), **extra}
    try:
        yield
    finally:
        _checks.env = before or {}


_given_up = threading.local()


@contextmanager
def lock_given_up_while_waiting(lock):
    """While this thread holds `lock` (the follow-up runner's, which serializes
    corpus writes), run_command gives it up for as long as it waits for its
    child: a job's standalone checks (a fresh process each, 10-40 s on CUDA)
    then no longer hold every other job of the runner back."""
    before = getattr(_given_up, "lock", None)
    _given_up.lock = lock
    try:
        yield
    finally:
        _given_up.lock = before


@contextmanager
def _lock_released():
    lock = getattr(_given_up, "lock", None)
    if lock is None:
        yield
        return
    lock.release()
    try:
        yield
    finally:
        lock.acquire()


def run_command(cmd: list, *, timeout: float, env: dict, cwd) -> tuple[int | None, str, str]:
    """(returncode or None on timeout, stdout, stderr). The child leads its own
    process group; on timeout the whole group is killed. Its CPU-seconds (and
    its waited-for children's) go to this thread's meter as "checks"
    (fuzz/cputime.py: a follow-up job's standalone checks)."""
    from fuzz import cputime

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, errors="replace", env=env, cwd=str(cwd), start_new_session=True)
    # read in threads while os.wait4 waits, which tells the child's CPU time (communicate() does not)
    chunks: dict = {}
    readers = [threading.Thread(target=lambda n, f: chunks.__setitem__(n, f.read()), args=(n, f), daemon=True)
               for n, f in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    deadline, pid, timed_out = time.monotonic() + timeout, 0, False
    with _lock_released():
        while not pid:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if not pid and not timed_out and time.monotonic() > deadline:
                timed_out = True
                with suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            time.sleep(0 if pid else 0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cputime.add("checks", usage.ru_utime + usage.ru_stime)
        for t in readers:  # a grandchild that outlives it may hold the pipes: not for long
            t.join(timeout=30 if not timed_out else 5)
    for t, f in zip(readers, (proc.stdout, proc.stderr)):
        if not t.is_alive():
            f.close()
    return (None if timed_out else proc.returncode), chunks.get("out", ""), chunks.get("err", "")


def tail(text: str, n: int = _TAIL) -> str:
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return "\n".join(lines[-n:])



def _parse_json_object(out: str) -> dict | None:
    dec = json.JSONDecoder()
    for i, ch in enumerate(out):
        if ch == "{" and (i == 0 or out[i - 1] == "\n"):
            try:
                obj, _ = dec.raw_decode(out[i:])
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and "outcome" in obj:
                return obj
    return None


def judge_in_subprocess(program_path, *, timeout: float = 600.0, python: str | None = None,
                        cache_dir: str | None = None, env: dict | None = None) -> Verdict:
    """The verdict of `python -m fuzz check PROGRAM --json --in-process`, run in a fresh
    process. A child killed by a signal is a CRASH verdict, one past the time
    limit a HANG verdict (as the worker pool reports them); anything else
    that yields no verdict raises JudgeError. env: variables for the child
    beyond this process's (child_env)."""
    # absolute: the child runs in the package's root, wherever this process runs
    cmd = [python or sys.executable, "-X", "faulthandler", "-m", "fuzz", "check", str(Path(program_path).absolute()),
           "--json", "--in-process"]
    start = time.monotonic()
    rc, out, err = run_command(cmd, timeout=timeout, env=child_env(cache_dir, env), cwd=_ROOT)
    if rc is None:
        return Verdict(outcome=Outcome.HANG, stage=Stage.PROCESS, seconds=time.monotonic() - start,
                       message=f"no verdict within the time limit ({timeout:g} s); worker killed")
    if rc < 0:
        frames, rest = faulthandler_frames(err.splitlines())
        name = signal_name(-rc)
        head = f"worker killed by signal {-rc} ({name})"
        last = "\n".join(rest[-40:])
        return Verdict(outcome=Outcome.CRASH, stage=Stage.PROCESS, exc_type=name, frames=frames,
                       message=with_tail(head, last),
                       seconds=time.monotonic() - start)
    d = _parse_json_object(out) if rc in (0, 1, 2) else None
    if d is None:
        raise JudgeError(f"re-judging the program failed (exit {rc}): {tail(err, 8) or tail(out, 8)}")
    try:
        return Verdict.from_dict(d)
    except (KeyError, TypeError, ValueError) as e:
        raise JudgeError(f"re-judging the program gave an unreadable verdict: {e}") from None


_THREAD = re.compile(r"^(?:Current thread|Thread) 0x[0-9a-fA-F]+")
_FRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.+?)\s*$')


def faulthandler_frames(lines: list[str]) -> tuple[list[str], list[str]]:
    """Split a worker's stderr into the stack of its main thread from a
    faulthandler dump ("file:line:function", innermost last, as in
    Verdict.frames) and the other lines (what the process itself printed:
    the stacks, most recent call first, would push the innermost frames out
    of a tail)."""
    blocks, rest, cur = [], [], None
    for ln in lines:
        if _THREAD.match(ln):
            cur = []
            blocks.append(cur)
            continue
        m = _FRAME.match(ln) if cur is not None else None
        if m:
            cur.append(f"{_short(m.group(1))}:{m.group(2)}:{m.group(3)}")
            continue
        if ln.strip():
            cur = None
        if ln.strip() and not ln.startswith("Extension modules:"):
            rest.append(ln)
    main = [b for b in blocks if any(f.endswith(":_worker_main") for f in b)] or blocks
    return (list(reversed(main[-1]))[-30:] if main else []), rest


def with_tail(head: str, tail: str) -> str:
    return f"{head}\n--- worker stderr, last lines ---\n{tail}" if tail else head


def _short(path: str) -> str:
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"



