"""What a shrink's standalone check costs, cold and warm (fuzz/judge/warm_kernels.py): the entry's program is
judged once in this process, with compile caches of its own (as a follow-up's shrink leaves them), then its
short repro runs standalone in a fresh process, alternately with empty caches (cold) and with the caches
seeded from this process's kernels (warm). Prints the CPU-seconds of each run (the fresh process and its
children) and whether it failed as the finding did.

    python3 benchmarks/standalone_check_cost.py CORPUS/ENTRY [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("entry")
    ap.add_argument("--rounds", type=int, default=2, help="cold and warm runs each (default 2)")
    args = ap.parse_args(argv)
    home = tempfile.mkdtemp(prefix="shapefuzz-check-cost-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(home, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(home, "triton")
    try:
        from fuzz import cputime
        from fuzz.findings.store.corpus import Corpus
        from fuzz.findings.store.scripts import entry_scripts
        from fuzz.judge.runner import run_case
        from fuzz.judge.warm_kernels import reusing
        from fuzz.program.short_repro import check_short_repro

        d = Path(args.entry)
        entry = Corpus(d.parent).load(d)
        t = time.monotonic()
        v = run_case(entry.program, rerun=False)
        print(f"judged here: {v.outcome.value} in {time.monotonic() - t:.1f} s", flush=True)
        src = entry_scripts(entry.program, entry.verdict, entry.signature)[0]["repro.py"]
        for _ in range(args.rounds):
            for warm in (False, True):
                with cputime.metered(in_process=False) as cpu:
                    if warm:
                        with reusing((os.environ["TORCHINDUCTOR_CACHE_DIR"], os.environ["TRITON_CACHE_DIR"])):
                            ok, shown, secs = check_short_repro(src, entry.verdict)
                    else:
                        ok, shown, secs = check_short_repro(src, entry.verdict)
                print(f"{'warm' if warm else 'cold'}: {cpu.get('checks', 0.0):.1f} CPU-s, {secs:.1f} s wall, "
                      f"{'fails as found' if ok else 'DOES NOT fail as found'} ({shown[:80]})", flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
