#!/usr/bin/env bash
# Set up, then run a short fuzz campaign on Inductor CPU. Extra flags go to
# `shapefuzz run`; running it again resumes (and here, finds it finished).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "shapefuzz quick start: set up .venv (scripts/setup.sh), then a 10-case campaign on Inductor CPU into runs/quickstart"
bash scripts/setup.sh
exec .venv/bin/shapefuzz run --backend inductor --device cpu --max-cases 10 --seed 0 \
    --state runs/quickstart "$@"  # findings in runs/quickstart/corpus
