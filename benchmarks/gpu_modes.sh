#!/usr/bin/env bash
# The generation-mode comparison on a GPU box (blind, swarm, pair-aimed).
# One side: a fresh CUDA campaign of TIME with the shipped known-issues rules, its follow-ups drained for at
# most DRAIN seconds, then its stats under OUT:
#   bash benchmarks/gpu_modes.sh OUT MODE [SEED] [TIME] [DRAIN]     MODE: blind, swarm or pair (--pair-aimed)
# All three at once (MODE three): blind, swarm and pair-aimed, each a campaign with --coverage on its own
# CPUs of the one GPU for TIME seconds, their follow-ups drained for DRAIN, then each run's compiler lines,
# distinct bugs and pairwise coverage (benchmarks/compare_modes.py --pairs) in OUT/three.txt and OUT/modes.json:
#   bash benchmarks/gpu_modes.sh OUT three 31 150 60               # about 7 minutes on a 16-CPU box
# Knobs (env) for MODE three: DEVICE (cuda), BACKEND (inductor), CPUS (three taskset lists, "1-5 6-10 11-15"),
# GPU (0), NO_COVERAGE=1 (campaigns without --coverage: a check on Python < 3.12).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_modes.sh OUT MODE [SEED] [TIME] [DRAIN]}
mode=${2:?blind, swarm, pair or three}
seed=${3:-31}
time=${4:-420s}
drain=${5:-120}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
mkdir -p "$out"
if [ "$mode" = three ]; then
  read -r c1 c2 c3 <<< "${CPUS:-1-5 6-10 11-15}"
  dev=${DEVICE:-cuda} be=${BACKEND:-inductor}
  gpu=""; [ "$dev" = cuda ] && gpu=":${GPU:-0}"
  "$PY" benchmarks/compare_modes.py "$out" --time "${time%s}" --drain "$drain" --seed "$seed" --pairs \
      ${NO_COVERAGE:+--no-coverage} --run "blind:$dev:$be:blind:$c1$gpu" --run "swarm:$dev:$be:swarm:$c2$gpu" \
      --run "pair:$dev:$be:pair:$c3$gpu" > "$out/three.txt" 2>&1
  rc=$?
  cat "$out/three.txt"
  exit $rc
fi
case "$mode" in blind) flags=(--draw blind);; swarm) flags=(--swarm);; pair) flags=(--pair-aimed);;
  *) echo "MODE: blind, swarm, pair or three" >&2; exit 2;; esac
state=runs/modes-$mode-$seed
mkdir -p "$state/corpus" && cp corpus/known_issues.json "$state/corpus/"
"$PY" -m fuzz run --device cuda --time "$time" --seed "$seed" --state "$state" --corpus "$state/corpus" \
    --no-wait ${flags[@]+"${flags[@]}"} > "$out/$mode.log" 2>&1
timeout -s INT "$drain" "$PY" -m fuzz followup "$state" >> "$out/$mode.log" 2>&1
"$PY" -m fuzz stats "$state" --json > "$out/$mode.json" 2>&1
"$PY" -m fuzz bugs "$state/corpus" > "$out/$mode-bugs.txt" 2>&1
tail -25 "$out/$mode.log"
true
