#!/usr/bin/env bash
# The torch_xla backend's tests, in their own venv (torch_xla 2.9.0 pins
# torch 2.9.0). Run from anywhere; the lead's .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-xla.sh   # skips the install when .venv-xla already has torch_xla
PJRT_DEVICE=CPU .venv-xla/bin/python -m pytest -q -n "${SHAPEFUZZ_TEST_WORKERS:-auto}" tests/xla
