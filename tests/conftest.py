import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# tests/ray start Ray clusters of their own (tens of processes, fixed to a module): they run in one
# process by .ci/ray.sh (or `pytest tests/ray`), never spread over pytest-xdist workers with the rest.
collect_ignore = ["ray"] if os.environ.get("PYTEST_XDIST_WORKER") else []
