#!/usr/bin/env bash
# A soak longer than one device call (10 minutes), run detached on the GPU box and watched by a chain of calls.
# Each call must come within the 30 s a machine stays warm, or the box (and the soak) is gone: so every
# call leaves what it saw under $OUT (the CSV and a tarball of the state so far), and a lost box costs only
# the rest of the run. Carry .whl/ (see docs/benchmarks.md); the soak runs from a private copy of the repo
# (/root/soakrepo), so the tree each call sends does not change code under a running campaign.
#   bash benchmarks/gpu_soak_calls.sh start SECONDS SEED WATCH   # start, then watch for WATCH s (first call)
#   bash benchmarks/gpu_soak_calls.sh watch WATCH                # watch WATCH s more (each middle call)
#   bash benchmarks/gpu_soak_calls.sh finish [LIMIT]             # wait for the end (at most LIMIT s), collect
set -u
what=${1:?usage: gpu_soak_calls.sh start SECONDS SEED WATCH | watch WATCH | finish [LIMIT]}
root=/root/soak
out=${OUT:-/tmp/soak-out}
mkdir -p "$out"
export PYTHONPATH=/root/soakrepo:/tmp/site PYTHONUNBUFFERED=1

snapshot() {  # what a lost box would otherwise take with it
  cp "$root/soak.csv" "$out/soak.csv" 2>/dev/null
  tar czf "$out/soak-state.tgz" -C "$root" soak.csv campaign.log state/cases.jsonl state/jobs.jsonl \
      state/findings.jsonl state/state.json state/followup.log 2>/dev/null
  tail -4 "$root/soak.csv" 2>/dev/null
}

case "$what" in
  start)
    seconds=${2:?SECONDS}; seed=${3:?SEED}; watch=${4:?WATCH}
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
    rm -rf /root/soakrepo "$root"; mkdir -p /root/soakrepo
    cp -r fuzz strategies corpus scripts pyproject.toml /root/soakrepo/
    { nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
      python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"; date -u
      git log -1 --format=%h 2>/dev/null; } | tee "$out/machine.txt"
    (cd /root/soakrepo && setsid nohup bash scripts/soak.sh "$root" "$seconds" 60 -- --device cuda \
        --seed "$seed" --no-wait > /root/soak.out 2>&1 < /dev/null &)
    sleep "$watch"; snapshot;;
  watch)
    sleep "${2:?WATCH}"; snapshot;;
  finish)
    limit=${2:-560}; t=0
    while pgrep -f "scripts/soak.sh $root" > /dev/null && [ "$t" -lt "$limit" ]; do sleep 5; t=$((t + 5)); done
    snapshot; cat /root/soak.out | tail -20;;
  *) echo "unknown step $what" >&2; exit 2;;
esac
