"""The fork server for standalone scripts and follow-up jobs (fuzz/judge/zygote.py): a script run in one of
its children exits, prints and fails as it would in a fresh `python repro.py`; what a child could not take on
runs in a fresh process instead."""

from __future__ import annotations

import os

import pytest

from fuzz.judge import zygote
from fuzz.judge.isolated import run_script


@pytest.fixture(scope="module")
def server():
    # pytest names the running test in the environment: neither the server nor a test's scripts have it
    session = os.environ.get(zygote.ENV)  # the test process's own (tests/conftest.py): named again after
    z = zygote.start({k: v for k, v in os.environ.items() if k != PYTEST_VAR})
    assert z is not None, "the zygote did not come up"
    yield z
    z.stop()
    if session:
        os.environ[zygote.ENV] = session
    assert not os.path.exists(os.path.dirname(z.path))  # nothing left in TMPDIR


PYTEST_VAR = "PYTEST_CURRENT_TEST"


@pytest.fixture
def in_zygote(server, monkeypatch):
    monkeypatch.setenv(zygote.ENV, server.path)
    return monkeypatch


def unnamed(monkeypatch):
    """Called first in a test's body: pytest sets PYTEST_CURRENT_TEST again after the fixtures."""
    monkeypatch.delenv(PYTEST_VAR, raising=False)


SCRIPTS = {
    "raises": "import torch\nraise RuntimeError('boom 42')\n",
    "prints": "import torch\nprint('sum', torch.ones(3).sum().item())\n",
    "exits": "import sys\nprint('bye', flush=True)\nsys.exit(3)\n",
    "signal": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    "where": "import os, sys, tempfile\nprint(os.getcwd() == sys.path[0], os.environ['TORCHINDUCTOR_CACHE_DIR'].startswith(os.getcwd()))\nraise SystemExit(1)\n",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_in_the_zygote_ends_as_in_a_fresh_process(in_zygote, monkeypatch, name):
    unnamed(in_zygote)
    src = SCRIPTS[name]
    forked = run_script(src, timeout=120, accept=lambda *a: True)
    monkeypatch.delenv(zygote.ENV)
    fresh = run_script(src, timeout=120)
    assert forked[0] == fresh[0] and forked[1] == fresh[1]
    assert forked[2].strip().splitlines()[-1:] == fresh[2].strip().splitlines()[-1:]
    if name == "raises":  # the traceback starts at the script, as python's does
        assert "runpy" not in forked[2] and "zygote" not in forked[2] and "repro.py" in forked[2]


def test_the_zygote_really_runs_it_and_each_child_starts_clean(in_zygote, tmp_path):
    unnamed(in_zygote)
    # torch is imported already in a child of the zygote, never in a fresh process's first line
    probe = "import sys\nsys.exit(7 if 'torch._inductor.compile_fx' in sys.modules else 0)\n"
    assert run_script(probe, timeout=60, accept=lambda *a: True)[0] == 7
    # what one child changes, the next does not see
    dirty = ("import torch._dynamo.config as c, sys\nseen = c.cache_size_limit\nc.cache_size_limit = 1234\n"
             "sys.exit(0 if seen != 1234 else 9)\n")
    assert run_script(dirty, timeout=60, accept=lambda *a: True)[0] == 0
    assert run_script(dirty, timeout=60, accept=lambda *a: True)[0] == 0


def test_an_answer_the_caller_does_not_accept_is_asked_of_a_fresh_process(in_zygote):
    unnamed(in_zygote)
    probe = "import sys\nsys.exit(7 if 'torch' in sys.modules else 0)\n"
    assert run_script(probe, timeout=60)[0] == 7  # a failure is kept (the default)
    assert run_script(probe, timeout=60, accept=lambda rc, out, err: rc == 0)[0] == 0  # else a fresh process


def test_variables_read_at_import_run_fresh_and_thread_counts_are_set_again(in_zygote, tmp_path):
    unnamed(in_zygote)
    show = "import torch, torch._inductor.config as c\nprint(c.compile_threads, torch.get_num_threads())\n"
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1", OMP_NUM_THREADS="1")
    work = tmp_path / "w"
    work.mkdir()
    (work / "s.py").write_text(show)
    got = zygote.run(str(work / "s.py"), cwd=str(work), env=env, timeout=60)
    assert got is not None and got[0] == 0 and got[1].split() == ["1", "1"]
    # an Inductor option set by environment is read at import: a child could not take it on
    other = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0" if os.environ.get("TORCHINDUCTOR_FX_GRAPH_CACHE") != "0"
                 else "1")
    assert zygote.run(str(work / "s.py"), cwd=str(work), env=other, timeout=60) is None
    assert zygote.differing(dict(os.environ), other) == ["TORCHINDUCTOR_FX_GRAPH_CACHE"]


def test_a_hang_in_the_zygote_is_killed_at_the_timeout(in_zygote, tmp_path):
    unnamed(in_zygote)
    (tmp_path / "h.py").write_text("import time\ntime.sleep(300)\n")
    got = zygote.run(str(tmp_path / "h.py"), cwd=str(tmp_path), env=dict(os.environ), timeout=2)
    assert got is not None and got[0] is None


def test_a_follow_up_job_computes_in_the_zygote(in_zygote, tmp_path):
    unnamed(in_zygote)
    from fuzz.campaign.followups.local import LocalRemote

    remote = LocalRemote(slots=1, log=lambda *a: None)
    remote._zygote_started = True  # this test's zygote, not one of its own
    remote.lock.acquire()
    try:
        with pytest.raises(RuntimeError, match="unknown job type 'nonesuch'"):
            remote.run("nonesuch", tmp_path, {}, timeout=120)
    finally:
        remote.lock.release()
    assert remote._zygote_told  # it ran in the zygote, not in a spawned process


def test_a_bad_request_is_refused_and_the_server_goes_on(in_zygote, tmp_path):
    import json
    import socket

    unnamed(in_zygote)
    for junk in (b"not json\n", json.dumps({"script": 1}).encode() + b"\n"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(os.environ[zygote.ENV])
            conn.sendall(junk)
            assert "error" in json.loads(conn.makefile("r").readline())
    assert run_script("raise SystemExit(4)\n", timeout=60)[0] == 4


def test_a_script_asked_for_while_the_zygote_starts_waits_for_it(tmp_path, monkeypatch):
    """A job or check asked for during the start runs in the zygote, not in a fresh process that would import
    torch again beside it (run returned None at once before: on 2 CPUs three shrink jobs spawned fresh)."""
    unnamed(monkeypatch)
    monkeypatch.delenv(zygote.ENV, raising=False)
    assert not zygote.expected()
    script = tmp_path / "s.py"
    script.write_text("import sys, torch\nsys.exit(5)\n")
    started = zygote.start_in_background(dict(os.environ))
    assert zygote.expected()
    try:
        got = zygote.run(str(script), cwd=str(tmp_path), env=dict(os.environ), timeout=120)
    finally:
        server = started.result(timeout=200)
        assert server is not None
        server.stop()
    assert got is not None and got[0] == 5, got
    assert not zygote.expected()


def test_a_process_that_compiled_is_one_its_zygote_still_takes(monkeypatch, tmp_path):
    """Loading an Inductor-compiled C++ module sets a variable in the environment (set again before each
    load): a process that compiled once must not differ from its zygote for it, or all its scripts run fresh."""
    import torch

    monkeypatch.delenv("_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR", raising=False)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    before = dict(os.environ)
    torch._dynamo.reset()
    torch.compile(lambda x: (x * 2).relu(), backend="inductor")(torch.randn(8))
    assert dict(os.environ) != before  # the compile did set something
    assert zygote.differing(before, dict(os.environ)) == []


def test_a_child_starts_with_the_imports_frozen_out_of_its_collections(in_zygote):
    """fuzz/heap.py: the server freezes what its imports left before it forks, so a child's collections walk
    only what the script allocates (a fresh process, as the comparison, has nothing frozen)."""
    unnamed(in_zygote)
    src = "import gc\nprint(gc.get_freeze_count())\nraise SystemExit(1)\n"
    rc, out, _ = run_script(src, timeout=120, accept=lambda *a: True)
    assert rc == 1 and int(out.split()[-1]) > 100_000, out
    in_zygote.delenv(zygote.ENV)
    rc, out, _ = run_script(src, timeout=120)
    assert rc == 1 and int(out.split()[-1]) == 0, out
