#!/bin/bash
# One side of a follow-up cost A/B on the GPU box (carry .whl/ with the regex wheel): LABEL TREE SEED TIME DRAIN
# Runs TREE's campaign under runs/ab/LABEL, then drains its follow-ups; a tarball of the state under $OUT.
set -u
label=$1; tree=$2; seed=$3; t=$4; drain=$5
root=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1
dir=$root/runs/ab/$label
rm -rf "$dir"; mkdir -p "$dir/corpus"; cp "$tree/corpus/known_issues.json" "$dir/corpus/"
nproc > "$dir/nproc"; uptime >> "$dir/nproc"
cd "$tree"
PYTHONPATH=$PWD:/tmp/site python3 -m fuzz run --device cuda --time "$t" --seed "$seed" --state "$dir/state" \
  --corpus "$dir/corpus" --no-wait > "$dir/campaign.log" 2>&1
echo "campaign rc=$?"; tail -25 "$dir/campaign.log"
PYTHONPATH=$PWD:/tmp/site timeout -s INT "$drain" python3 -m fuzz followup "$dir/state" > "$dir/followup.log" 2>&1
echo "followup rc=$?"; tail -5 "$dir/followup.log"
cd "$root"
tar czf "$OUT/$label.tgz" --exclude='*/variants/*' --exclude='*.lock' --exclude='*inductor*' --exclude='*triton*' --exclude='*/tmp/*' --exclude='*cache*' -C runs/ab "$label"
