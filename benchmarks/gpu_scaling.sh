#!/usr/bin/env bash
# Scaling over GPUs: the same seed's campaign on one GPU with 16
# workers (`one`) or with the default command, every GPU and a worker per CPU
# (`all`), each a soak of SECONDS sampled every 20 s (scripts/soak.sh), then its
# sustained rate and the workers' busy share (scripts/case_rate.py). Run both
# on one machine (one lease): their ratio is the figure. `pinned` is `one` held
# to 16 CPUs (taskset), the share of the box a one-GPU box of 16 CPUs has: its
# follow-ups then compete with its cases, as the 4-GPU run's do.
#   bash benchmarks/gpu_scaling.sh OUT SECONDS SEED one|pinned|all
set -uo pipefail
out=${1:?usage: gpu_scaling.sh OUT SECONDS SEED one|pinned|all}
seconds=${2:?}; seed=${3:?}; which=${4:?}
mkdir -p "$out"; out=$(cd "$out" && pwd)  # before the cd below
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
case "$which" in
  one|pinned) args=(--gpus 0 --workers 16); workers=16;;
  all) args=(); workers=$(nproc);;
  *) echo "one, pinned or all" >&2; exit 2;;
esac
pin=()
[ "$which" = pinned ] && pin=(taskset -c 0-15)
dir=/tmp/scaling-$which
rm -rf "$dir"
${pin[@]+"${pin[@]}"} bash scripts/soak.sh "$dir" "$seconds" 20 -- --device cuda --seed "$seed" --no-wait "${args[@]}" > "$out/${which}_soak.txt" 2>&1
cp "$dir/soak.csv" "$out/${which}_soak.csv"
{ head -5 "$dir/campaign.log"; tail -15 "$dir/campaign.log"; } > "$out/${which}_campaign.log"
"$PY" scripts/case_rate.py "$dir/state" --workers "$workers" --skip-first 60 --skip-last 20 | tee "$out/${which}_rate.json"
nvidia-smi --query-gpu=index,name,memory.used --format=csv >> "$out/${which}_campaign.log" 2>&1
