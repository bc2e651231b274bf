"""Each given repro.py run through a zygote (fuzz/judge/zygote.py) and in a fresh process: exit code, CPU-s,
wall s and the last stderr line of each, to compare.

    PYTHONPATH=. python3 benchmarks/zygote_vs_fresh.py REPRO.py [REPRO.py ...]
"""
import os, sys, glob, time
sys.path.insert(0, os.getcwd())
from fuzz.judge import zygote
from fuzz.judge.isolated import run_script
from fuzz import cputime
t = time.monotonic(); z = zygote.start(dict(os.environ)); print("zygote up", bool(z), round(time.monotonic() - t, 1), flush=True)
for f in sys.argv[1:]:
    src = open(f).read()
    for use in (True, False):
        if use: os.environ[zygote.ENV] = z.path
        else: os.environ.pop(zygote.ENV, None)
        with cputime.metered(in_process=False) as acc:
            t = time.monotonic(); rc, out, err = run_script(src, timeout=200, accept=lambda *a: True)
        last = (err.strip().splitlines() or [""])[-1][:120]
        print(os.path.basename(f), "zygote" if use else "fresh ", "rc", rc, "cpu", acc.get("checks"), "wall", round(time.monotonic() - t, 1), last, flush=True)
z.stop()
