#!/usr/bin/env bash
# One side of the generation-mode comparison (issue 27) on a GPU box: a fresh CUDA campaign of TIME with the
# shipped known-issues rules, its follow-ups drained for at most DRAIN seconds, then its stats under OUT.
#   bash scripts/gpu_modes.sh OUT MODE [SEED] [TIME] [DRAIN]     MODE: blind or swarm
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_modes.sh OUT MODE [SEED] [TIME] [DRAIN]}
mode=${2:?blind or swarm}
seed=${3:-31}
time=${4:-420s}
drain=${5:-120}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
mkdir -p "$out"
case "$mode" in blind) flags=();; swarm) flags=(--swarm);; *) echo "MODE: blind or swarm" >&2; exit 2;; esac
state=runs/modes-$mode-$seed
mkdir -p "$state/corpus" && cp corpus/known_issues.json "$state/corpus/"
"$PY" -m fuzz run --device cuda --time "$time" --seed "$seed" --state "$state" --corpus "$state/corpus" \
    --no-wait ${flags[@]+"${flags[@]}"} > "$out/$mode.log" 2>&1
timeout -s INT "$drain" "$PY" -m fuzz followup "$state" >> "$out/$mode.log" 2>&1
"$PY" -m fuzz stats "$state" --json > "$out/$mode.json" 2>&1
"$PY" -m fuzz bugs "$state/corpus" > "$out/$mode-bugs.txt" 2>&1
tail -25 "$out/$mode.log"
true
