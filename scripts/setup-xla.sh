#!/usr/bin/env bash
# Create .venv-xla with torch_xla 2.9.0 and its exact torch (2.9.0).
# torch_xla pins torch to the same minor release, so it cannot share .venv
# (torch 2.13). Idempotent: a venv that already imports torch_xla is kept.
# Run from anywhere; the venv lands in the repo root.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-xla
PY="$VENV/bin/python"

if [ -x "$PY" ] && "$PY" -c "import torch_xla" >/dev/null 2>&1; then
    echo "setup-xla: $VENV already has torch_xla; skipping install"
    "$PY" -c "import xdist" 2>/dev/null || "$PY" -m pip install --quiet pytest-xdist  # (older venvs lack it)
    "$PY" -c "import regex" 2>/dev/null || "$PY" -m pip install --quiet regex  # known-issue rules (older venvs lack it)
    exit 0
fi

python3 -m venv "$VENV"
"$PY" -m pip install --quiet --upgrade pip
# PyPI's torch 2.9.0 for Linux is the CUDA build (a few GB with its nvidia-*
# wheels); it runs fine on CPU with PJRT_DEVICE=CPU.
"$PY" -m pip install --quiet --progress-bar off \
    "torch==2.9.0" "torch_xla==2.9.0" hypothesis numpy pytest pytest-xdist rich regex
# The repo is imported from its root (tests/xla/conftest.py puts it on
# sys.path), so no editable install is needed.
"$PY" -c "import torch, torch_xla; print('setup-xla: torch', torch.__version__, 'torch_xla', torch_xla.__version__)"
