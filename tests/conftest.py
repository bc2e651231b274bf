import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# Which torch release is the newest is not the tests' to ask the package index (a network call in every
# `bugs`): a test that needs it sets SHAPEFUZZ_NEWEST_TORCH itself.
os.environ.setdefault("SHAPEFUZZ_NEWEST_TORCH", "offline")
# Nor is it the shipped corpus's to decide which planted findings a test campaign writes: campaigns run with
# no reference corpus unless a test names one (tests/test_reference.py).
os.environ.setdefault("SHAPEFUZZ_KNOWN_CORPUS", "none")

# tests/ray start Ray clusters of their own (tens of processes, fixed to a module): they run in one
# process by .ci/ray.sh (or `pytest tests/ray`), never spread over pytest-xdist workers with the rest.
collect_ignore = ["ray"] if os.environ.get("PYTEST_XDIST_WORKER") else []

# The test-only planted backends (tests.planted_extra:NAME) are named in programs the tests judge in
# this process and in sandboxes; a module:attr backend is imported only where it is allowed
# (fuzz/judge/backends.py), as `--allow-backend tests.planted_extra` would on the command line.
from fuzz.judge.backends import allow_modules  # noqa: E402

allow_modules(["tests.planted_extra", "toybackends", "test_triage"])  # and two tests' own modules

# A test process imports torch, Dynamo and Inductor for its first test that compiles; imported here, they are
# frozen out of the garbage collector's passes (fuzz/heap.py), as in a campaign's workers: after a few
# in-process campaigns, full collections over them were 75-80% of the time of the tests that draw programs.
import torch._dynamo  # noqa: E402,F401
import torch._inductor.compile_fx  # noqa: E402,F401

from fuzz import heap  # noqa: E402

heap.freeze_imports()


def pytest_collection_modifyitems(config, items):
    """The campaign tests (half a minute to a minute each) first, then the rest (seconds each): spread over
    pytest-xdist's workers in this order, a run ends on short tests, not on one long test drawn last that
    keeps one worker busy while the other has nothing left (CI's `scripts/test.sh --all`)."""
    items.sort(key=lambda item: item.get_closest_marker("campaign") is None)  # stable: file order otherwise


def pytest_itemcollected(item):
    """The tests of a module that share a module-scoped fixture run in one worker (an xdist_group, which
    scripts/test.sh's --dist loadgroup keeps together): each worker would build the fixture again (replay's
    corpus of five entries, 24 s, was built twice). Marked as each test is collected: pytest-xdist reads the
    groups in its own pytest_collection_modifyitems."""
    if _shares_a_module_fixture(item):
        item.add_marker(pytest.mark.xdist_group(f"module-fixture:{item.module.__name__}"))


def _shares_a_module_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None or getattr(item, "module", None) is None:
        return False
    return any(defs[-1].scope in ("module", "class", "package") for defs in info.name2fixturedefs.values())


@pytest.fixture(scope="session", autouse=True)
def one_zygote_per_test_process():
    """One zygote for this test process (fuzz/judge/zygote.py), named to every standalone check, follow-up job
    and command it starts: each in-process campaign's follow-ups and each test's repro checks would otherwise
    start one of their own, or a fresh interpreter a script (3-5 CPU-seconds of importing torch each here).
    A script the zygote cannot take (its environment differs in a variable read at import) runs fresh."""
    from fuzz.judge import zygote

    if os.environ.get("SHAPEFUZZ_NO_ZYGOTE") == "1":
        yield
        return
    started = zygote.start_in_background(dict(os.environ, PYTHONPATH=ROOT))
    yield
    server = started.result(timeout=240)
    if server is not None:
        server.stop()


@pytest.fixture(autouse=True)
def followups_in_the_test_process(request, monkeypatch):
    """A campaign run in the test's process runs its follow-up jobs there too, once its cases are done
    (FollowUps.runs_here), unless the test is marked runner_process; a command the test starts is unchanged."""
    from fuzz.campaign.followups.supervisor import FollowUps

    monkeypatch.setattr(FollowUps, "runs_here", request.node.get_closest_marker("runner_process") is None)
