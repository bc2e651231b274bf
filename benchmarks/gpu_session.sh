#!/usr/bin/env bash
# A measured session on a GPU box, in phases that fit short leases (a lease
# may end between phases; the campaign resumes from its state dir):
#   bench     benchmarks/bench_workers.py on Inductor CUDA: bare floor,
#             in-process, pool of 1, pool of K
#   campaign  `shapefuzz run` on CUDA, every compile mode and the CUDA flag
#             menu, until CAMPAIGN_SECS in total over all phases (resumes);
#             this call stops after STOP_SECS (SIGINT: a clean stop)
#   scaling   short fresh campaigns with SCALE_KS workers (cases/s per K)
#   followup  each corpus entry: compute-sanitizer re-run (memory errors),
#             shrink, triage (ablation), report --write; then replay
# The corpus and state live in runs/gpu/; each phase ends by packing them
# (without the workers' compile caches) into OUTDIR/gpu_runs.tgz, and a
# phase on a fresh machine first unpacks gpu-carry/gpu_runs.tgz if present.
#   bash benchmarks/gpu_session.sh OUTDIR PHASE...
# Knobs (env): K workers (8), SEED (11), BENCH_CASES (12), BENCH_SECS (200),
# CAMPAIGN_SECS (1260), STOP_SECS (560), SHRINK_SECS (150), TRIAGE_SECS (200),
# REPLAY_SECS (120).
set -u
OUTDIR=${1:?usage: gpu_session.sh OUTDIR PHASE...}; shift
K=${K:-8}; SEED=${SEED:-11}
PY=${PY:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$OUTDIR"
C=runs/gpu/corpus S=runs/gpu/state
stamp() { echo "[$(date +%T)] $*" | tee -a "$OUTDIR/session.log"; }

if [ ! -d $S ] && [ -f gpu-carry/gpu_runs.tgz ]; then
  tar xzf gpu-carry/gpu_runs.tgz && stamp "restored runs/gpu from gpu-carry/gpu_runs.tgz"
fi
mkdir -p $C $S
[ -f $C/known_issues.json ] || cp corpus/known_issues.json $C/

stamp "env"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c "import torch, triton, platform; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, 'python', platform.python_version())"
  echo "cpus $(nproc)"; command -v compute-sanitizer; } >> "$OUTDIR/session.log" 2>&1

entries() { find $C -mindepth 1 -maxdepth 1 -type d ! -name '.*' | sort; }

for phase in "$@"; do
  case $phase in
  bench)
    stamp "bench: ${BENCH_CASES:-12} programs, pools of 1 and $K"
    timeout "${BENCH_SECS:-200}" $PY benchmarks/bench_workers.py --backend inductor --device cuda \
        --cases "${BENCH_CASES:-12}" --workers "$K" --repeat 1 > "$OUTDIR/bench.log" 2>&1
    stamp "bench exit $?";;
  campaign)
    stamp "campaign: to ${CAMPAIGN_SECS:-1260}s in all, this call at most ${STOP_SECS:-560}s; $K workers on GPU 0, seed $SEED"
    timeout -s INT -k 60 "${STOP_SECS:-560}" $PY -m fuzz run --backend inductor --device cuda \
        --time "${CAMPAIGN_SECS:-1260}s" --seed "$SEED" --state $S --corpus $C --workers-per-gpu "$K" \
        --timeout 90 --no-shrink --no-triage --no-sanitize >> "$OUTDIR/campaign.log" 2>&1
    stamp "campaign exit $?"
    $PY -m fuzz stats $S --json > "$OUTDIR/stats.json" 2>&1;;
  scaling)
    for k in ${SCALE_KS:-1 16}; do
      stamp "scaling: ${SCALE_SECS:-90}s campaign with $k workers"
      rm -rf runs/gpu/scale-$k
      timeout -s INT -k 60 $((${SCALE_SECS:-90} + 60)) $PY -m fuzz run --backend inductor --device cuda \
          --time "${SCALE_SECS:-90}s" --seed "$SEED" --state runs/gpu/scale-$k/state --corpus runs/gpu/scale-$k/corpus \
          --workers-per-gpu "$k" --timeout 90 --no-shrink --no-triage --no-sanitize > "$OUTDIR/scale-$k.log" 2>&1
      $PY -m fuzz stats runs/gpu/scale-$k/state --json > "$OUTDIR/scale-$k.json" 2>&1
      stamp "scaling $k: $(grep -o '"cases_per_second[^,]*' "$OUTDIR/scale-$k.json")"
    done;;
  followup)
    n=$(entries | grep -c .)
    stamp "followup: $n entries, $K at once"
    for e in $(entries); do
      if grep -qiE "storage|illegal memory|misaligned|out of bounds" "$e/verdict.json"; then
        timeout 300 $PY -m fuzz sanitize "$e" --timeout 240 > "$e/sanitize.out" 2>&1 &
      fi
    done; wait
    stamp "shrink, ${SHRINK_SECS:-150}s each"
    entries | xargs -r -P "$K" -I{} sh -c \
        "timeout ${SHRINK_SECS:-150} $PY -m fuzz shrink {} --time-budget $((${SHRINK_SECS:-150} - 20)) > {}/shrink.out 2>&1"
    stamp "triage, ${TRIAGE_SECS:-200}s each"
    entries | xargs -r -P "$K" -I{} sh -c \
        "timeout ${TRIAGE_SECS:-200} $PY -m fuzz triage {} --timeout 120 > {}/triage.out 2>&1"
    for e in $(entries); do timeout 60 $PY -m fuzz report "$e" --write > /dev/null 2>&1; done
    stamp "replay"
    timeout "${REPLAY_SECS:-120}" $PY -m fuzz replay $C -j "$K" --timeout 100 > "$OUTDIR/replay.log" 2>&1
    stamp "replay exit $?";;
  *) stamp "unknown phase $phase"; exit 2;;
  esac
  tar czf "$OUTDIR/gpu_runs.tgz" --exclude=workers runs/gpu 2>/dev/null
  stamp "packed $(du -h "$OUTDIR/gpu_runs.tgz" | cut -f1) into gpu_runs.tgz"
done
stamp "done"
