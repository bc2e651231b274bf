#!/usr/bin/env bash
# Set up, then run the test suite (pass pytest flags to narrow it).
#   bash scripts/test.sh              every test but the campaign ones (about 10 minutes on 2 cores)
#   bash scripts/test.sh --campaign   the campaign tests: whole campaigns and searches, a minute or more each
#   bash scripts/test.sh --all        both
# Spread over the CPUs (pytest-xdist); SHAPEFUZZ_TEST_WORKERS=0 runs in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
select=(-m "not campaign")
case "${1:-}" in
  --campaign) select=(-m campaign); shift;;
  --all) select=(); shift;;
esac
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q -n "${SHAPEFUZZ_TEST_WORKERS:-auto}" --dist loadgroup --durations=25 "${select[@]}" "$@"
