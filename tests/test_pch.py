"""Inductor's precompiled C++ header is kept once per machine (fuzz/pch.py): every compiling process's
scratch TMPDIR links Inductor's header path to it, and nothing is left in the system's TMPDIR."""

import os
import subprocess
import sys
import time

import pytest

from fuzz import pch


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SHAPEFUZZ_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_header_made_through_the_link_outlives_the_scratch_dir(tmp_path, cache):
    import shutil

    scratch = tmp_path / "job" / "tmp"
    scratch.mkdir(parents=True)
    kept = pch.link(str(scratch))
    assert kept is not None and kept.is_dir() and str(kept).startswith(str(cache))
    where = pch.inductor_dir(str(scratch))  # where Inductor looks under that TMPDIR
    assert os.path.islink(where) and pch.linked(str(scratch))
    open(os.path.join(where, "header.h.gch"), "w").write("pch")  # what a compile makes
    shutil.rmtree(tmp_path / "job")  # the job ends
    assert (kept / "header.h.gch").read_text() == "pch"
    again = tmp_path / "next" / "tmp"
    again.mkdir(parents=True)
    assert pch.link(str(again)) == kept  # a second run finds it
    assert open(os.path.join(pch.inductor_dir(str(again)), "header.h.gch")).read() == "pch"


def test_the_kept_dir_is_per_torch_release_and_compiler(cache, monkeypatch):
    a, b = pch.home("2.15.0"), pch.home("2.14.1")
    assert a != b and a.parent == b.parent
    pch._compiler_id.cache_clear()
    monkeypatch.setenv("CXX", "a-compiler-that-is-not-here")
    try:
        assert pch.home("2.15.0") != a
    finally:
        pch._compiler_id.cache_clear()


def test_past_its_cap_the_kept_dir_takes_no_more_headers(tmp_path, cache, monkeypatch):
    """Another compile command line's header (a triage's C++ flags) is then made in the process's own scratch
    dir and goes with it, so the kept dir stays bounded."""
    monkeypatch.setattr(pch, "CAP", 4096)
    one = tmp_path / "one"
    one.mkdir()
    kept = pch.link(str(one))
    (kept / "a.h.gch").write_bytes(b"x" * 65536)
    two = tmp_path / "two"
    two.mkdir()
    assert pch.link(str(two)) is None
    assert not os.path.exists(pch.inductor_dir(str(two)))


def test_dirs_of_releases_unused_for_a_month_go_when_another_is_made(tmp_path, cache):
    old, recent = pch.home("2.9.0"), pch.home("2.14.1")
    for d in (old, recent):
        d.mkdir(parents=True)
        (d / "h.gch").write_text("x")
    month = time.time() - pch.UNUSED_FOR - 60
    os.utime(old, (month, month))
    scratch = tmp_path / "s"
    scratch.mkdir()
    kept = pch.link(str(scratch), "2.15.0")
    assert kept.is_dir() and recent.is_dir() and not old.exists()


def test_an_in_process_command_leaves_nothing_in_tmpdir(tmp_path, cache):
    """A command that compiles in place (`check`) runs with a scratch TMPDIR of its own whose header path is
    linked to the kept dir; at exit the scratch dir is gone and the system's TMPDIR holds nothing new."""
    system_tmp = tmp_path / "tmp"
    system_tmp.mkdir()
    code = ("import os, tempfile; from fuzz import pch; d = pch.scratch_tmpdir(); "
            "assert d and tempfile.gettempdir() == d and os.environ['TMPDIR'] == d; "
            "assert pch.linked(d); open(os.path.join(pch.inductor_dir(d), 'h.gch'), 'w').write('pch'); "
            "print(d)")
    env = dict(os.environ, TMPDIR=str(system_tmp), SHAPEFUZZ_CACHE=str(cache))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(r.stdout.strip())
    assert list(system_tmp.iterdir()) == []
    assert (pch.home() / "h.gch").read_text() == "pch"


def test_children_get_a_linked_tmpdir_and_a_linked_one_is_kept(tmp_path, cache, monkeypatch):
    from fuzz.judge.isolated import child_env

    monkeypatch.setattr(pch, "_children_tmp", [])
    env = child_env(None)
    assert pch.linked(env["TMPDIR"])
    mine = tmp_path / "linked"
    mine.mkdir()
    pch.link(str(mine))
    monkeypatch.setenv("TMPDIR", str(mine))
    monkeypatch.setattr("tempfile.tempdir", None)
    assert child_env(None)["TMPDIR"] == str(mine)
    assert pch.scratch_tmpdir() is None  # already linked: nothing to do
