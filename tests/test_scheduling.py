"""The suite's own spread over pytest-xdist workers (tests/conftest.py): tests that share a module-scoped
fixture are one group, which `--dist loadgroup` (scripts/test.sh) gives to one worker, so the fixture is
built once. A pytest whose node ids lose the group (9.2 with pytest-xdist 3.8) fails here under test.sh."""

import os

import pytest


@pytest.fixture(scope="module")
def built_once():
    return os.getpid()


def _grouping(request) -> bool:
    """Whether this run is a pytest-xdist worker's under --dist loadgroup (the worker's option, set by xdist)."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER")) and getattr(request.config.option, "loadgroup", False)


def test_the_tests_of_a_module_fixture_are_one_group(request, built_once):
    mark = request.node.get_closest_marker("xdist_group")
    assert mark is not None and mark.args == ("module-fixture:test_scheduling",)
    if _grouping(request):
        assert request.node.nodeid.endswith("@module-fixture:test_scheduling"), request.node.nodeid


def test_a_test_without_one_is_spread_alone(request, tmp_path):
    assert request.node.get_closest_marker("xdist_group") is None
    assert "@" not in request.node.nodeid
