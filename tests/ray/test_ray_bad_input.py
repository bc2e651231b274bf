"""--ray at an address where no cluster answers: one line on stderr, exit 2,
nothing written (the cluster is joined before the state dir is opened)."""

import subprocess
import sys

import pytest

from raycluster import ROOT, env, free_port

pytest.importorskip("ray")


def test_no_cluster_at_the_address_is_one_line_and_writes_nothing(tmp_path):
    port = free_port()
    r = subprocess.run([sys.executable, "-m", "fuzz", "run", "--backend", "eager", "--max-cases", "2",
                        "--ray", f"127.0.0.1:{port}", "--state", str(tmp_path / "st"), "--corpus",
                        str(tmp_path / "corpus")], env=env(), capture_output=True, text=True, timeout=120, cwd=ROOT)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert f"--ray 127.0.0.1:{port}: no Ray head answers there" in lines[0]
    assert f"ray start --head --port={port}" in lines[0]
    assert not (tmp_path / "st").exists() and not (tmp_path / "corpus").exists()
