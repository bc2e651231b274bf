#!/usr/bin/env bash
# Write every corpus entry's short repro anew and run each short
# repro standalone on this machine (`shapefuzz repro CORPUS --check`): CUDA
# entries need a GPU box. OUT gets the log and a tarball of what changed in the
# entries (repro.py, meta.json), to unpack over corpus/.
#   bash benchmarks/check_repros.sh OUT [CORPUS]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: check_repros.sh OUT [CORPUS]}
corpus=${2:-corpus}
mkdir -p "$out"
PY=${PYTHON:-python3}
{ nvidia-smi -L 2>/dev/null; "$PY" -c "import torch; print('torch', torch.__version__)"; } > "$out/machine.txt"
PYTHONUNBUFFERED=1 "$PY" -m fuzz repro "$corpus" --check --timeout 300 2>&1 | tee "$out/check.log"
rc=${PIPESTATUS[0]}
tar czf "$out/entries.tgz" "$corpus"/*/repro.py "$corpus"/*/meta.json
exit "$rc"
