#!/usr/bin/env bash
# Create .venv and install shapefuzz with its test extra (and SHAPEFUZZ_EXTRAS). Idempotent.
# torch is installed first and on its own: `pip install torch==X` takes a CPU
# build where one lies on local disk (dev/CI machines), and installing it
# before the project keeps pip from resolving `torch>=2.6` to a multi-GB CUDA
# build. Override with SHAPEFUZZ_TORCH="torch==2.11.0" (or "" to keep the
# torch already in the venv).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { echo "shapefuzz setup: $*"; }  # each slow step says what it does first (pip runs quiet)
[ -x .venv/bin/python ] || { say "creating .venv"; "$PY" -m venv .venv; }
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  say "installing ${SHAPEFUZZ_TORCH-torch==2.13.0} into .venv (once; minutes on a fresh machine)"
  .venv/bin/python -m pip install -q --disable-pip-version-check "${SHAPEFUZZ_TORCH-torch==2.13.0}"
fi
# SHAPEFUZZ_EXTRAS adds extras, e.g. SHAPEFUZZ_EXTRAS=ray for `shapefuzz run --ray` (.ci/ray.sh)
say "installing shapefuzz and its test extra${SHAPEFUZZ_EXTRAS:+ and $SHAPEFUZZ_EXTRAS} into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test${SHAPEFUZZ_EXTRAS:+,$SHAPEFUZZ_EXTRAS}]"
.venv/bin/python -c "import torch, hypothesis; print(f'shapefuzz env: torch {torch.__version__}, hypothesis {hypothesis.__version__}')"
