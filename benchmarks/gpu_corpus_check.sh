#!/usr/bin/env bash
# The corpus checked on a GPU box in one device call: check every short repro of
# corpus/ standalone, record the (partial) affected range of each CUDA entry
# under this machine's torch, then start a default 4-minute CUDA campaign into
# a fresh corpus (the shipped known-issues rules apply) and leave its
# follow-ups queued for `shapefuzz followup runs/c$SEED` (a second call).
#   bash benchmarks/gpu_corpus_check.sh OUT [SEED]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_corpus_check.sh OUT [SEED]}
seed=${2:-31}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
bash benchmarks/check_repros.sh "$out" corpus
"$PY" -m fuzz versions corpus --python "$PY" --jobs 16 2>&1 | tee "$out/versions.log"
tar czf "$out/entries.tgz" corpus/*/repro.py corpus/*/meta.json
state=runs/c$seed
mkdir -p "$state/corpus" && cp corpus/known_issues.json "$state/corpus/"
"$PY" -m fuzz run --device cuda --time 240s --seed "$seed" --state "$state" --corpus "$state/corpus" --no-wait \
    2>&1 | tail -40 > "$out/campaign.log"
"$PY" -m fuzz stats "$state" --json > "$out/stats.json" 2>&1
