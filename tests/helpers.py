"""Shared test helpers: deterministic program draws and tiny hand-made programs."""

from __future__ import annotations

import contextlib
import importlib.util
from pathlib import Path

from fuzz.campaign.generate import generate
from fuzz.program.ir import OpCall, Program, RunSettings, TensorInput


def draw_programs(n: int, seed: int = 0, **kw) -> list[Program]:
    from strategies import programs

    return list(generate(programs(**kw), seed_=seed, count=n, batch_size=min(n, 100)))


def program(ops, *, shape=("s0",), sizes=None, marks=None, backend="aot_eager", dtype="float32", outputs=None,
            inputs=None) -> Program:
    """A hand-made program over one input x0 (unless `inputs` is given)."""
    sizes = sizes or {"s0": [3, 9, 12]}
    inputs = inputs or [TensorInput(name="x0", shape=list(shape), dtype=dtype, marks=list(marks or []))]
    calls = [OpCall(op=o, args=a, params=p, out=f"v{i}") for i, (o, a, p) in enumerate(ops)]
    return Program(sizes=sizes, inputs=inputs, ops=calls, outputs=outputs or [calls[-1].out],
                   settings=RunSettings(backend=backend))


def script_module(name: str):
    """scripts/NAME.py loaded as a module (scripts/ is no package)."""
    path = Path(__file__).resolve().parent.parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@contextlib.contextmanager
def scripts_in_a_zygote():
    """While the block runs, standalone scripts (fuzz.judge.isolated.run_script, run_standalone) run in children
    of a zygote (fuzz/judge/zygote.py), as shapefuzz's own checks do: a fresh `python repro.py` spent about 4
    CPU-seconds of CI importing torch, Dynamo and Inductor; a child starts where that import ended and is
    otherwise as fresh (no compile has run in it). A script the zygote cannot take runs in a fresh process."""
    import os

    from fuzz.judge import zygote

    if zygote.expected():  # the test process's own (tests/conftest.py)
        yield
        return
    root = str(Path(__file__).resolve().parent.parent)
    server = zygote.start(dict(os.environ, PYTHONPATH=root))
    try:
        yield
    finally:
        if server is not None:
            server.stop()


def run_standalone(path, env: dict, timeout: float = 600):
    """`python PATH` with `env` (a CompletedProcess), in the zygote scripts_in_a_zygote starts where one runs."""
    import subprocess
    import sys

    from fuzz.judge import zygote

    got = zygote.run(str(path), cwd=str(Path(path).parent), env=env, timeout=timeout)
    if got is None:
        return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=timeout)
    rc, out, err, _ = got
    if rc is None:
        raise subprocess.TimeoutExpired([str(path)], timeout)
    return subprocess.CompletedProcess([str(path)], rc, out, err)


def run_cli(argv, capsys):
    """(exit code, stdout, stderr) of `shapefuzz ARGV` run in this process."""
    from fuzz.cli import main

    capsys.readouterr()
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err
