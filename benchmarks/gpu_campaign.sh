#!/usr/bin/env bash
# A default CUDA campaign into a fresh corpus (the shipped known-issues rules
# apply), its follow-ups drained for at most DRAIN seconds (Ctrl-C-safe: the
# same command drains the rest), then stats, BUGS.md, disk use and a tarball
# of the corpus under OUT. A second call with the same SEED only drains.
#   bash benchmarks/gpu_campaign.sh OUT [SEED] [TIME] [DRAIN]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_campaign.sh OUT [SEED] [TIME] [DRAIN]}
seed=${2:-31}
time=${3:-240s}
drain=${4:-300}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
state=runs/c$seed
tmp0=$(du -sk /tmp 2>/dev/null | cut -f1)
if [ ! -d "$state" ]; then
  mkdir -p "$state/corpus" && cp corpus/known_issues.json "$state/corpus/"
  "$PY" -m fuzz run --device cuda --time "$time" --seed "$seed" --state "$state" --corpus "$state/corpus" \
      --no-wait > "$out/campaign.log" 2>&1
  tail -40 "$out/campaign.log"
fi
timeout -s INT "$drain" "$PY" -m fuzz followup "$state" > "$out/followup.log" 2>&1
tail -5 "$out/followup.log"
"$PY" -m fuzz stats "$state" --json > "$out/stats.json" 2>&1
"$PY" -m fuzz bugs "$state/corpus" --write > "$out/bugs.txt" 2>&1
cp "$state/corpus/BUGS.md" "$out/" 2>/dev/null
{ echo "state dir: $(du -sh "$state" | cut -f1)"; echo "/tmp grew by: $(( $(du -sk /tmp | cut -f1) - tmp0 )) KiB";
  ls "$state/corpus" | wc -l; ls "$state/corpus/unconfirmed" 2>/dev/null | wc -l; } | tee "$out/disk.txt"
tar czf "$out/corpus.tgz" --exclude='*/variants/*' --exclude='*.lock' "$state/corpus" "$state/followup.log" \
    "$state/jobs.jsonl" 2>/dev/null
true
