#!/usr/bin/env bash
# A soak: run a campaign and sample, every INTERVAL seconds, the state dir's
# and /tmp's disk use, the RSS of the driver and of all its descendants
# (workers, compilers, follow-ups), the follow-ups pending and done, the
# findings unshrunk (corpus entries not re-keyed yet; of those, how many still
# wait for a shrink, which the others tried and could not) and the cases/s.
# One CSV line a sample in OUT/soak.csv; the campaign's output in
# OUT/campaign.log. Extra arguments go to `shapefuzz run`.
#   bash scripts/soak.sh OUT SECONDS [INTERVAL] -- [run args...]
#   bash scripts/soak.sh /tmp/soak 1800 60 -- --device cuda --seed 7
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: soak.sh OUT SECONDS [INTERVAL] -- [run args...]}
seconds=${2:?usage: soak.sh OUT SECONDS [INTERVAL] -- [run args...]}
interval=60
shift 2
if [ "${1:-}" != "--" ] && [ -n "${1:-}" ]; then interval=$1; shift; fi
[ "${1:-}" = "--" ] && shift
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ] && PY=.venv/bin/python
mkdir -p "$out"
state="$out/state"
corpus="$out/corpus"
mkdir -p "$corpus" && cp corpus/known_issues.json "$corpus/" 2>/dev/null
tmp0=$(du -sk /tmp 2>/dev/null | cut -f1)
"$PY" -m fuzz run --time "${seconds}s" --state "$state" --corpus "$corpus" "$@" > "$out/campaign.log" 2>&1 &
driver=$!
echo "t_s,state_dir_kb,tmp_growth_kb,driver_rss_kb,driver_cpu_pct,load1,tree_rss_kb,processes,cases,cases_per_s,followups_pending,followups_done,entries,unshrunk,unshrunk_waiting" \
  > "$out/soak.csv"
start=$SECONDS

tree_rss() {  # RSS of the driver and every descendant, and how many processes that is
  ps -eo pid=,ppid=,rss= | awk -v root="$driver" '
    { ppid[$1] = $2; rss[$1] = $3 }
    END { n = 0; total = 0
          for (p in ppid) { q = p; while (q != "" && q != 0 && q != root) q = ppid[q]; if (q == root) { total += rss[p]; n++ } }
          print total "," n }'
}

cpu_ticks() {  # the driver's CPU time (all its threads), in clock ticks
  awk '{ print $14 + $15 }' "/proc/$driver/stat" 2>/dev/null || echo 0
}
hz=$(getconf CLK_TCK)
last_ticks=0
last_t=0

sample() {
  local t=$((SECONDS - start))
  local sd tmp drss tree stats ticks dcpu load
  sd=$(du -sk "$state" 2>/dev/null | cut -f1)
  tmp=$(( $(du -sk /tmp 2>/dev/null | cut -f1) - tmp0 ))
  drss=$(ps -o rss= -p "$driver" 2>/dev/null | tr -d ' ')
  ticks=$(cpu_ticks)
  # the driver's CPU use since the last sample: near 100 it is what the workers wait on
  dcpu=$(awk -v a="$last_ticks" -v b="${ticks:-0}" -v dt=$((t - last_t)) -v hz="$hz" \
    'BEGIN { if (dt > 0 && b >= a) printf "%.0f", 100 * (b - a) / hz / dt; else print 0 }')
  last_ticks=${ticks:-0}
  last_t=$t
  load=$(cut -d' ' -f1 /proc/loadavg)
  tree=$(tree_rss)
  stats=$("$PY" - "$state" "$corpus" <<'EOF'
import json, subprocess, sys
from pathlib import Path
state, corpus = sys.argv[1], Path(sys.argv[2])
try:
    s = json.loads((Path(state) / "state.json").read_text())
except (OSError, ValueError):
    s = {}
f = s.get("followups") or {}
entries = [d for d in corpus.iterdir() if (d / "signature.json").is_file()] if corpus.is_dir() else []
try:  # the entries whose shrink ran to an end: done, skipped (does not reproduce, ...) or failed
    from fuzz.campaign.followups.runner import JobLog
    ended = {j.entry for j in JobLog(state).refresh().jobs.values() if j.type == "shrink" and j.ended}
except Exception:  # noqa: BLE001 - a sample goes on without it (a corrupt log is the campaign's to report)
    ended = set()
unshrunk = waiting = 0
for d in entries:
    try:
        minimal = json.loads((d / "signature.json").read_text()).get("minimal")
    except (OSError, ValueError):
        continue
    unshrunk += not minimal
    waiting += not minimal and d.name not in ended
print(f"{s.get('cases', 0)},{s.get('cases_per_second', 0)},{f.get('pending', 0)},{f.get('done', 0)},"
      f"{len(entries)},{unshrunk},{waiting}")
EOF
)
  echo "$t,${sd:-0},$tmp,${drss:-0},$dcpu,$load,$tree,$stats" >> "$out/soak.csv"
}

while kill -0 "$driver" 2>/dev/null; do
  sample
  for _ in $(seq "$interval"); do kill -0 "$driver" 2>/dev/null || break; sleep 1; done
done
wait "$driver"
rc=$?
sample
# the campaign exits 1 when it found bugs (EXIT_BUG), 0 when none, 2 on bad input
echo "soak: campaign exited $rc; $(wc -l < "$out/soak.csv") lines in $out/soak.csv"
if command -v column > /dev/null; then column -s, -t < "$out/soak.csv" | tail -40; else tail -40 "$out/soak.csv"; fi
