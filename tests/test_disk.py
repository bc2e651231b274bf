"""A campaign's disk (fuzz/campaign/disk.py): compile caches under
--cache-limit, nothing written to /tmp, and a full disk that stops the
campaign with one line and exit 2, resumed with nothing lost."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.files import tree_bytes

ROOT = Path(__file__).resolve().parent.parent


def shapefuzz(*args, env=None):
    e = dict(os.environ, PYTHONPATH=str(ROOT), SHAPEFUZZ_ALLOW_BACKEND="tests.planted_extra", **(env or {}))
    return subprocess.run([sys.executable, "-m", "fuzz", *map(str, args)], capture_output=True, text=True, env=e,
                          timeout=600, cwd=ROOT)


def _cases(state: Path) -> list[int]:
    log = state / "cases.jsonl"
    return sorted(json.loads(line)["i"] for line in log.read_text().splitlines()) if log.exists() else []


def test_a_full_disk_stops_the_campaign_with_one_line_and_the_same_command_resumes_it(tmp_path):
    marker = tmp_path / "full"
    marker.write_text("")
    args = ["run", "--backend", "tests.planted_extra:disk_full_while_marked", "--workers", "1", "--max-cases", "6",
            "--state", tmp_path / "st", "--corpus", tmp_path / "corpus", "--no-shrink", "--no-triage"]
    env = {"SHAPEFUZZ_TEST_DISK_FULL": str(marker)}
    r = shapefuzz(*args, env=env)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "disk is full" in lines[0] and "Traceback" not in r.stderr, \
        (r.returncode, r.stderr[-2000:])
    # the case that met the full disk is no finding, and is not logged: the resume judges it
    assert not list((tmp_path / "corpus").glob("*/program.json"))
    assert len(_cases(tmp_path / "st")) < 6
    marker.unlink()
    r = shapefuzz(*args, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _cases(tmp_path / "st") == list(range(6))  # every case judged once: nothing lost, nothing twice
    assert not list((tmp_path / "corpus").glob("*/program.json"))


@pytest.mark.campaign
def test_a_small_cache_limit_holds_and_nothing_is_written_to_tmp(tmp_path):
    """Inductor on CPU, one worker: its share of 1 MB is under what a few
    compiles write, so it is replaced with its caches emptied; TMPDIR (what
    the campaign and its compilers would write to /tmp) stays empty."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    state = tmp_path / "st"
    r = shapefuzz("run", "--backend", "inductor", "--workers", "1", "--max-cases", "3", "--max-ops", "3",
                  "--state", state, "--corpus", tmp_path / "corpus", "--cache-limit", "1MB", "--seed", "3", "--draw", "blind",
                  env={"TMPDIR": str(tmp)})
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert "cache limit 1.0 MB" in r.stdout
    summary = json.loads((state / "state.json").read_text())
    assert summary["cases"] == 3 and summary["restarts"].get("cache", 0) >= 1, summary["restarts"]
    # the caches at the end: under the limit, give or take the last case's compile
    assert tree_bytes(state / "workers") < 1_000_000 + 1_500_000, tree_bytes(state / "workers")
    assert list(tmp.iterdir()) == [], sorted(p.name for p in tmp.iterdir())
    assert not (state / "workers" / "tmp").exists()  # the workers' scratch dir goes with the pool
