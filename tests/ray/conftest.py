"""The --ray tests need Ray (the `ray` extra): skipped without it."""

import pytest

pytest.importorskip("ray")

from raycluster import LocalCluster  # noqa: E402


@pytest.fixture
def cluster():
    c = LocalCluster()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def three_nodes():
    """A head and two worker nodes, one Ray CPU each, shared by a module's tests (in file order:
    the test that kills a node comes last)."""
    c = LocalCluster()
    try:
        c.head(cpus=1)
        c.worker("w1", cpus=1)
        c.worker("w2", cpus=1)
        c.wait_nodes(3)
        yield c
    finally:
        c.stop()
