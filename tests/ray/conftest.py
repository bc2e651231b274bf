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
