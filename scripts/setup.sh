#!/usr/bin/env bash
# Create .venv and install shapefuzz with its test extra (and SHAPEFUZZ_EXTRAS). Idempotent.
# torch comes first and on its own: the newest release on the package index
# (`python3 -m fuzz.releases newest`), installed exactly, with any machine-wide
# pip constraint lifted for that one install and said so: a fuzzer chooses the
# compiler it tests. SHAPEFUZZ_TORCH=2.13.0 (or torch==2.13.0) pins another
# release; SHAPEFUZZ_TORCH= (empty) keeps the torch already in .venv. Where the
# index cannot be reached, a torch already in .venv is kept, with a note.
# The project is then installed with torch pinned to the one in .venv, so no
# later resolve (the test extra, ray) moves it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { echo "shapefuzz setup: $*"; }  # each slow step says what it does first (pip runs quiet)
[ -x .venv/bin/python ] || { say "creating .venv"; "$PY" -m venv .venv; }
version() { .venv/bin/python -c "import torch; print(torch.__version__)" 2>/dev/null || true; }
have=$(version)
if [ "${SHAPEFUZZ_TORCH+set}" = set ] && [ -z "$SHAPEFUZZ_TORCH" ]; then
  want=""
  [ -n "$have" ] || { echo "shapefuzz setup: SHAPEFUZZ_TORCH is empty (keep .venv's torch) but .venv has none" >&2; exit 2; }
elif [ -n "${SHAPEFUZZ_TORCH:-}" ]; then
  want=${SHAPEFUZZ_TORCH#torch==}
  [[ "$want" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?(\+[A-Za-z0-9.]+)?$ ]] || {
    echo "shapefuzz setup: SHAPEFUZZ_TORCH=$SHAPEFUZZ_TORCH is not a torch release (give e.g. 2.13.0)" >&2; exit 2; }
elif want=$("$PY" -m fuzz.releases newest); then
  say "torch $want is the newest release on the package index"
elif [ -n "$have" ]; then
  say "the package index cannot be reached; keeping torch $have"
  want=""
else
  echo "shapefuzz setup: the package index cannot be reached and .venv has no torch (set SHAPEFUZZ_TORCH)" >&2
  exit 2
fi
if [ -n "$want" ] && [ "${have%%+*}" != "${want%%+*}" ]; then
  note=$("$PY" -m fuzz.releases note "$want" 2>/dev/null || true)
  [ -z "$note" ] || say "$note"
  say "installing torch==$want into .venv${have:+ (it has $have)} (minutes on a fresh machine: torch and its libraries are several GB)"
  PIP_CONSTRAINT=/dev/null .venv/bin/python -m pip install -q --disable-pip-version-check "torch==$want"
fi
pin=.venv/shapefuzz-torch-pin.txt
echo "torch==$(version | cut -d+ -f1)" > "$pin"
# SHAPEFUZZ_EXTRAS adds extras, e.g. SHAPEFUZZ_EXTRAS=ray for `shapefuzz run --ray` (.ci/ray.sh)
say "installing shapefuzz and its test extra${SHAPEFUZZ_EXTRAS:+ and $SHAPEFUZZ_EXTRAS} into .venv"
PIP_CONSTRAINT="$pin" .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test${SHAPEFUZZ_EXTRAS:+,$SHAPEFUZZ_EXTRAS}]"
.venv/bin/python -c "import torch, hypothesis; print(f'shapefuzz env: torch {torch.__version__}, hypothesis {hypothesis.__version__}')"
