"""The follow-ups of the same entries under several code versions: for each
checkout, a fresh copy of CORPUS (entries as found, unshrunk), a shrink and a
triage job queued per entry, and that checkout's follow-up runner (`python -m
fuzz.campaign.followups.runner`) run to the end; then the CPU-seconds of its whole
process tree (every job, check and sandbox worker: the children it waited
for), its wall seconds and
scripts/followup_cost.py's job figures, one column per checkout. Unlike a
campaign's, the entries are the same for every version.

    python3 benchmarks/followup_bench.py OUT CORPUS OLD_CHECKOUT NEW_CHECKOUT [--label old --label new]
        [--jobs shrink,triage --jobs shrink] [--budget 300] [--timeout 300]

--jobs, one per checkout in order: the job types queued per entry (default shrink,triage), what that
checkout's campaign queues (a campaign that defers the triage to the report queues only the shrink).
Each runner gets its caches under its state dir, empty at its start, as a campaign's runner does.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def run_version(out: Path, corpus: Path, tree: Path, budget: float, timeout: float,
                types=("shrink", "triage")) -> dict:
    state, copy = out / "state", out / "corpus"
    shutil.rmtree(out, ignore_errors=True)
    state.mkdir(parents=True)
    shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns("*.lock", ".index.json"))
    entries = sorted(d.name for d in copy.iterdir() if (d / "signature.json").is_file())
    params = {"corpus": str(copy), "budget": budget, "timeout": timeout}
    with open(state / "jobs.jsonl", "w") as f:  # the campaign's queue (fuzz/campaign/followups/runner.py JobLog)
        for e in entries:
            for t in types:
                f.write(json.dumps({"job": f"{t}:{e}", "event": "queued", "time": time.time(), "type": t,
                                    "entry": e, "params": params}) + "\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(out / "followup.log", "w") as log:
        # the runner itself (`shapefuzz followup` wants a campaign's config.json): every job, then it exits
        # its caches under the state dir, as a campaign's (fuzz/campaign/disk.py followup_env): not the
        # user's /tmp/torchinductor_<user>, which whatever compiled these programs before may have warmed
        home = state / "followup-cache"
        caches = {"TORCHINDUCTOR_CACHE_DIR": str(home / "inductor"), "TRITON_CACHE_DIR": str(home / "triton"),
                  "TMPDIR": str(home / "tmp")}
        for d in caches.values():
            os.makedirs(d, exist_ok=True)
        subprocess.run([sys.executable, "-m", "fuzz.campaign.followups.runner", str(state)], cwd=tree, stdout=log,
                       stderr=subprocess.STDOUT, env={**os.environ, **caches, "PYTHONPATH": str(tree)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"entries_in": len(entries), "cpu_s": round(cpu, 1), "wall_s": round(time.monotonic() - start, 1),
            "cpu_s_per_entry": round(cpu / max(1, len(entries)), 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("corpus", help="entries as found (unshrunk), copied afresh for each version")
    ap.add_argument("checkouts", nargs="+")
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--jobs", action="append", default=[], help="job types queued per entry, comma-separated, "
                    "one --jobs per checkout in order (default shrink,triage)")
    ap.add_argument("--budget", type=float, default=300.0, help="a shrink's time budget (the campaign's default)")
    ap.add_argument("--timeout", type=float, default=300.0, help="per case")
    args = ap.parse_args(argv)
    import followup_cost  # noqa: E402 - scripts/followup_cost.py (on the path: see the end of this file)

    labels = args.label + [Path(c).resolve().name for c in args.checkouts[len(args.label):]]
    rows = []
    kinds = args.jobs + ["shrink,triage"] * (len(args.checkouts) - len(args.jobs))
    for label, tree, types in zip(labels, args.checkouts, kinds):
        out = Path(args.out).resolve() / label
        fig = run_version(out, Path(args.corpus).resolve(), Path(tree).resolve(), args.budget, args.timeout,
                          tuple(t for t in types.split(",") if t))
        fig["load"] = [round(x, 2) for x in os.getloadavg()]
        fig.update(followup_cost.figures(out / "state", out / "corpus", 60, 30))
        rows.append(fig)
        print(f"{label}: {fig['cpu_s']} CPU-s in {fig['wall_s']} s for {fig['entries_in']} entries "
              f"(jobs {types}; load average at the end {fig['load']})", flush=True)
    print(f"| | {' | '.join(labels)} |\n|---{'|---' * len(labels)}|")
    for name, get in (("entries", "entries_in"), ("follow-up CPU-s, whole tree", "cpu_s"),
                      ("per entry", "cpu_s_per_entry"), ("wall s", "wall_s"),
                      ("entries after (unshrunk)", None)):
        print(f"| {name} | " + " | ".join(str(r[get]) if get else f"{r['entries']} ({r['unshrunk']})"
                                          for r in rows) + " |")
    for t in followup_cost.TYPES:
        if any(t in r["jobs"] for r in rows):
            print(f"| {t}: jobs / median wall s | " + " | ".join(
                f"{r['jobs'][t]['jobs']} / {r['jobs'][t]['median_wall_s']}" if t in r["jobs"] else "-"
                for r in rows) + " |")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent / "scripts"))
    sys.exit(main())
