"""Fixtures of the --ray tests: local Ray clusters (tests/ray/raycluster.py).
The modules that need Ray skip themselves without it (pytest.importorskip)."""

import pytest


@pytest.fixture(scope="module")
def three_nodes():
    """A head and two worker nodes, one Ray CPU each, shared by a module's tests (in file order:
    the test that kills a node comes last)."""
    from raycluster import LocalCluster

    c = LocalCluster()
    try:
        c.head(cpus=1)
        c.worker("w1", cpus=1)
        c.worker("w2", cpus=1)
        c.wait_nodes(3)
        yield c
    finally:
        c.stop()
