#!/usr/bin/env bash
# One measured session on a GPU box, in the order that fits a short lease:
#   1. throughput: scripts/bench_workers.py on Inductor CUDA (bare floor,
#      in-process, pool of 1, pool of K);
#   2. a campaign on CUDA with every compile mode and the CUDA flag menu;
#   3. each new corpus entry shrunk (in parallel), its report written;
#   4. `shapefuzz replay` of the resulting corpus.
# Logs go to OUTDIR; the corpus and state to runs/gpu/ (and a tarball in OUTDIR).
#   bash scripts/gpu_session.sh OUTDIR [CAMPAIGN_SECONDS]
# Knobs (env): K workers (8), SEED (11), BENCH_CASES (6), BENCH_SECS (150), DRAIN_SECS (100),
# SHRINK_SECS (90), REPLAY_SECS (120).
set -u
OUTDIR=${1:?usage: gpu_session.sh OUTDIR [CAMPAIGN_SECONDS]}
SECS=${2:-1200}
K=${K:-8}; SEED=${SEED:-11}; SHRINK_SECS=${SHRINK_SECS:-90}
PY=${PY:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$OUTDIR" runs/gpu
stamp() { echo "[$(date +%T)] $*" | tee -a "$OUTDIR/session.log"; }

stamp "env"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c "import torch, triton, platform; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', platform.python_version())"
  nproc; } >> "$OUTDIR/session.log" 2>&1

stamp "bench: ${BENCH_CASES:-6} programs, pools of 1 and 4"
timeout "${BENCH_SECS:-150}" $PY scripts/bench_workers.py --backend inductor --device cuda \
    --cases "${BENCH_CASES:-6}" --workers 4 --repeat 1 > "$OUTDIR/bench.log" 2>&1
stamp "bench exit $?"

C=runs/gpu/corpus
mkdir -p $C && cp corpus/known_issues.json $C/
stamp "campaign: ${SECS}s, $K workers on GPU 0, seed $SEED"
timeout -s INT $((SECS + ${DRAIN_SECS:-100})) $PY -m fuzz run --backend inductor --device cuda --time "${SECS}s" --seed "$SEED" \
    --state runs/gpu/state --corpus $C --workers-per-gpu "$K" --timeout 90 --no-shrink --no-sanitize > "$OUTDIR/campaign.log" 2>&1
stamp "campaign exit $?"
$PY -m fuzz stats runs/gpu/state --json > "$OUTDIR/stats.json" 2>&1

entries=$(find $C -mindepth 1 -maxdepth 1 -type d | sort)
stamp "shrink $(echo "$entries" | grep -c . ) entries, ${SHRINK_SECS}s each, $K at once"
echo "$entries" | grep . | xargs -r -P "$K" -I{} sh -c \
    "timeout $SHRINK_SECS $PY -m fuzz shrink {} --time-budget $((SHRINK_SECS - 15)) > {}/shrink.out 2>&1"
for e in $entries; do timeout 60 $PY -m fuzz report "$e" --write > /dev/null 2>&1; done
stamp "replay"
timeout "${REPLAY_SECS:-120}" $PY -m fuzz replay $C -j "$K" --timeout 100 > "$OUTDIR/replay.log" 2>&1
stamp "replay exit $?"
tar czf "$OUTDIR/gpu_runs.tgz" runs/gpu 2>/dev/null
stamp "done"
