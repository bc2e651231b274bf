#!/usr/bin/env bash
# --coverage on a GPU box (Python 3.12+): its tests, then its overhead: the same CUDA campaign (seed, cases)
# without and with --coverage, one after the other, no follow-ups; mean worker seconds a case from cases.jsonl.
#   bash benchmarks/gpu_coverage.sh OUT [CASES] [SEED]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_coverage.sh OUT [CASES] [SEED]}
n=${2:-400}
seed=${3:-31}
PY=${PYTHON:-python3}
mkdir -p "$out"
"$PY" -m pytest -q -p no:cacheprovider tests/test_coverage.py > "$out/tests.txt" 2>&1; tail -3 "$out/tests.txt"
for mode in plain coverage; do
  flag=(); [ $mode = coverage ] && flag=(--coverage)
  st=runs/cov-$mode; rm -rf "$st"; mkdir -p "$st/c"; cp corpus/known_issues.json "$st/c/"
  start=$(date +%s)
  "$PY" -m fuzz run --device cuda --max-cases "$n" --seed "$seed" --no-shrink --no-triage --state "$st" \
      --corpus "$st/c" ${flag[@]+"${flag[@]}"} > "$out/$mode.log" 2>&1
  wall=$(( $(date +%s) - start ))
  "$PY" - "$st" "$mode" "$wall" <<'PYEOF' | tee -a "$out/overhead.txt"
import json, sys
st, mode, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [json.loads(x) for x in open(f"{st}/cases.jsonl")]
secs = sorted(c["seconds"] for c in cases)
summary = json.load(open(f"{st}/state.json"))
print(f"{mode}: {len(cases)} cases in {wall} s wall, worker s/case mean {sum(secs)/len(secs):.3f} "
      f"median {secs[len(secs)//2]:.3f}, compile share {summary.get('compile_share')}, "
      f"compiler lines {summary.get('compiler_lines', '-')}")
PYEOF
done
true
