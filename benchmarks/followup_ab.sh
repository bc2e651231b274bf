#!/usr/bin/env bash
# Two versions of shapefuzz on one box, the same campaign each (seed, time,
# arguments; a fresh corpus with the shipped known-issues rules; follow-ups
# drained for at most DRAIN seconds after the cases), then one table of both
# (scripts/followup_cost.py: cases/s, follow-up seconds per entry, distinct
# bugs and the time to each). serial (the default): one after the other, each
# with every CPU, as a user runs it; pinned: both at once, each on half the
# CPUs (taskset), when the lease is short.
#   bash benchmarks/followup_ab.sh OUT OLD NEW SEED TIME [serial|pinned] [DRAIN] [-- run args...]
#   git archive OLDREV | (mkdir -p runs/ab-old && tar -x -C runs/ab-old)   # the old one, in an ignored folder
#   bash benchmarks/followup_ab.sh /tmp/ab runs/ab-old . 43 300s serial 600 -- --device cuda
# ONLY=old or ONLY=new runs that side alone (a device call of 10 minutes holds one side: run the
# other in the next call, on the same warm machine); the table comes once both sides are there.
set -uo pipefail
usage="usage: followup_ab.sh OUT OLD NEW SEED TIME [serial|pinned] [DRAIN] [-- run args...]"
out=${1:?$usage}; old=${2:?$usage}; new=${3:?$usage}; seed=${4:?$usage}; time=${5:?$usage}
shift 5
mode=serial; drain=600
if [ -n "${1:-}" ] && [ "$1" != "--" ]; then mode=$1; shift; fi
if [ -n "${1:-}" ] && [ "$1" != "--" ]; then drain=$1; shift; fi
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$out" && cd "$out" && pwd)
old=$(cd "$old" && pwd); new=$(cd "$new" && pwd)
PY=${PYTHON:-python3}
[ -z "${PYTHON:-}" ] && [ -x "$here/.venv/bin/python" ] && PY=$here/.venv/bin/python
export PYTHONUNBUFFERED=1

one() {  # label tree cpus(taskset list, or empty) -- run args
  local label=$1 tree=$2 cpus=$3 pin=()
  shift 3
  [ -n "$cpus" ] && pin=(taskset -c "$cpus")
  local dir=$out/$label
  mkdir -p "$dir/corpus" && cp "$tree/corpus/known_issues.json" "$dir/corpus/" 2>/dev/null
  git -C "$tree" rev-parse HEAD > "$dir/commit" 2>/dev/null || echo "(not a git checkout)" > "$dir/commit"
  ( cd "$tree" && PYTHONPATH=$tree "${pin[@]}" "$PY" -m fuzz run --time "$time" --seed "$seed" --state "$dir/state" \
      --corpus "$dir/corpus" --no-wait "$@" > "$dir/campaign.log" 2>&1
    PYTHONPATH=$tree "${pin[@]}" timeout -s INT "$drain" "$PY" -m fuzz followup "$dir/state" > "$dir/followup.log" 2>&1
    true )
  echo "$label: $(tail -1 "$dir/campaign.log")"
}

if [ "$mode" = pinned ]; then
  n=$(nproc); half=$((n / 2))
  one old "$old" "0-$((half - 1))" "$@" &
  one new "$new" "$half-$((n - 1))" "$@" &
  wait
else
  [ "${ONLY:-old}" = new ] || one old "$old" "" "$@"
  [ "${ONLY:-new}" = old ] || one new "$new" "" "$@"
fi
[ -d "$out/old/state" ] && [ -d "$out/new/state" ] || exit 0
PYTHONPATH=$here "$PY" "$here/scripts/followup_cost.py" "$out/old/state" "$out/new/state" --label old --label new \
  | tee "$out/table.md"
