#!/usr/bin/env bash
# Set up, then run a short fuzz campaign on Inductor CPU (pass more `shapefuzz run` flags to change it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/shapefuzz run --backend inductor --device cpu --max-cases 10 --seed 0 --out runs/quickstart "$@"
