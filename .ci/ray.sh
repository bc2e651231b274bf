#!/usr/bin/env bash
# The --ray tests: install the ray extra into .venv, then run tests/ray in one
# process (each module starts a local Ray cluster of its own with `ray start`:
# a head and worker nodes on 127.0.0.1; about 3 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
SHAPEFUZZ_EXTRAS=ray bash scripts/setup.sh
.venv/bin/python -c "import ray; print(f'ray {ray.__version__}')"
RAY_USAGE_STATS_ENABLED=0 .venv/bin/python -m pytest -q -p no:cacheprovider tests/ray
