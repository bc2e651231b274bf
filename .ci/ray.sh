#!/usr/bin/env bash
# The --ray tests: install the ray extra into .venv, then run tests/ray in one
# process (the campaign tests start a local Ray cluster of their own with
# `ray start`: a head and two worker nodes on this machine; the pytest run took
# 3m20s on 2 cores with another job's load ~3, up to 5m30s with load 5-7).
set -euo pipefail
cd "$(dirname "$0")/.."
SHAPEFUZZ_EXTRAS=ray bash scripts/setup.sh
.venv/bin/python -c "import ray; print(f'ray {ray.__version__}')"
RAY_USAGE_STATS_ENABLED=0 .venv/bin/python -m pytest -q -p no:cacheprovider tests/ray
