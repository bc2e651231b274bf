#!/usr/bin/env bash
# On a GPU box: one campaign of the README's GPU command (no tuning flags,
# seed 11; 310 s, or GPU_RATE_TIME seconds) from the checkout TREE, then its sustained rate
# (case_rate.py), stats, raw cases.jsonl and, with `floor`, floor_rate.py.
# Everything lands in $OUT as NAME*. Two trees on one warm machine give an
# A/B of the same program stream (docs/benchmarks.md).
#   bash benchmarks/gpu_rate.sh TREE NAME [floor]
set -u
TREE=$1; NAME=$2; T=${GPU_RATE_TIME:-310}
S=/tmp/$NAME
rm -rf $S; mkdir -p $S
( cd $TREE && export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
  timeout -s INT -k 60 $((T + 110)) python -m fuzz run --backend inductor --device cuda --time ${T}s --seed 11 --no-wait \
      --state $S/st --corpus $S/c > $OUT/${NAME}.log 2>&1
  echo "run exit $?" >> $OUT/${NAME}.log
  python -m fuzz stats $S/st --json > $OUT/${NAME}_stats.json 2>&1 )
PYTHONPATH=$PWD python scripts/case_rate.py $S/st > $OUT/${NAME}_rate.json 2>&1
cp $S/st/cases.jsonl $OUT/${NAME}_cases_raw.jsonl
if [ "${3:-}" = floor ]; then
  PYTHONPATH=$PWD timeout ${FLOOR_TIMEOUT:-170} python benchmarks/floor_rate.py $S/st --cases ${FLOOR_CASES:-240} --procs 16 > $OUT/${NAME}_floor.json 2>&1
fi
