"""One bug, one entry: a CPU campaign with default flags against each planted
backend (fuzz/planted.py), and how many corpus entries each one leaves.

    python3 benchmarks/one_entry.py [--cases 300] [--seed 4] [--only NAME ...] [--out runs/one_entry]

Prints one row per backend: raw signatures, entries, the minimal ops of each
entry and the wall time, then writes the rows to OUT/one_entry.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def entries(corpus: str) -> list[str]:
    return sorted(d for d in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, d)) and not d.startswith("."))


def campaign(name: str, cases: int, seed: int, out: str, extra: list[str]) -> dict:
    state, corpus = os.path.join(out, name, "state"), os.path.join(out, name, "corpus")
    shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    os.makedirs(corpus)
    shutil.copy(os.path.join(ROOT, "corpus", "known_issues.json"), corpus)
    cmd = [sys.executable, "-m", "fuzz", "run", "--backend", f"fuzz.planted:{name}", "--max-cases", str(cases),
           "--seed", str(seed), "--state", state, "--corpus", corpus] + extra
    start = time.monotonic()
    with open(os.path.join(out, name, "run.log"), "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=ROOT)).returncode
    raw = set()
    if os.path.exists(os.path.join(state, "findings.jsonl")):
        for line in open(os.path.join(state, "findings.jsonl")):
            try:
                raw.add(json.loads(line)["key"])
            except (json.JSONDecodeError, KeyError):
                pass
    found = []
    for e in entries(corpus):
        program = json.load(open(os.path.join(corpus, e, "program.json")))
        meta = json.load(open(os.path.join(corpus, e, "meta.json")))
        found.append({"entry": e, "ops": [o["op"] for o in program["ops"]], "inputs": len(program["inputs"]),
                      "shrunk": "shrink" in meta, "hits": meta.get("hits"),
                      "variants": len(meta.get("variants", []))})
    return {"backend": name, "rc": rc, "raw": len(raw), "entries": found, "seconds": round(time.monotonic() - start)}


def main() -> None:
    from fuzz.planted import PLANTED

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--only", nargs="*", choices=PLANTED)
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "one_entry"))
    ap.add_argument("extra", nargs="*", help="more `shapefuzz run` flags, after --")
    args = ap.parse_args()
    rows = []
    for name in args.only or PLANTED:
        row = campaign(name, args.cases, args.seed, args.out, args.extra)
        rows.append(row)
        forms = "; ".join(f"{'+'.join(e['ops'])}{'' if e['shrunk'] else ' (unshrunk)'}" for e in row["entries"])
        print(f"{name:28s} rc {row['rc']}  raw {row['raw']:3d}  entries {len(row['entries'])}  "
              f"{row['seconds']:5d} s  {forms}", flush=True)
        with open(os.path.join(args.out, "one_entry.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
