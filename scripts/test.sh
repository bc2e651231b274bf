#!/usr/bin/env bash
# Set up, then run the test suite (pass pytest flags to narrow it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Spread over the CPUs (pytest-xdist): about 12 minutes on 2 cores. SHAPEFUZZ_TEST_WORKERS=0 runs in one process.
exec .venv/bin/python -m pytest -q -n "${SHAPEFUZZ_TEST_WORKERS:-auto}" "$@"
