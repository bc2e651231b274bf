"""Where a fresh repro.py's CPU goes: the CPU-s of fresh processes that import torch, initialise
CUDA, import Dynamo and Inductor, compile x + 1; then of each given repro cold, with a warm Triton cache, with
both caches warm, and under cProfile (profiles and their top 45 under $OUT). Needs CUDA.

    python3 benchmarks/check_import_cost.py REPRO.py [REPRO.py ...]
"""
import os, resource, subprocess, sys, tempfile, time, glob, shutil
here = os.path.dirname(os.path.abspath(__file__))
out = os.environ.get("OUT", "/tmp")

def run(cmd, env_extra=None, cwd=None, keep=None):
    env = dict(os.environ); env.update(env_extra or {})
    w = keep or tempfile.mkdtemp()
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(w, "inductor"))
    env.setdefault("TRITON_CACHE_DIR", os.path.join(w, "triton"))
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=cwd or w, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return cpu, time.monotonic() - t, p.returncode, p.stderr[-300:]

py = sys.executable
base = {"TORCHINDUCTOR_COMPILE_THREADS": "1", "OMP_NUM_THREADS": "1"}
for label, code in [("import torch", "import torch"),
                    ("import torch + cuda init", "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()"),
                    ("+ import inductor", "import torch; torch.zeros(1, device='cuda'); import torch._inductor.compile_fx, torch._dynamo"),
                    ("+ compile x+1 cuda", "import torch\n@torch.compile\ndef f(x): return x + 1\nf(torch.zeros(4, device='cuda')); torch.cuda.synchronize()")]:
    for _ in range(2):
        c, w, rc, _e = run([py, "-c", code], base)
        print(f"{label:32s} cpu {c:6.1f}  wall {w:6.1f}  rc {rc}", flush=True)
for f in sys.argv[1:]:
    name = os.path.basename(f)
    keep = tempfile.mkdtemp(); shutil.copy(f, os.path.join(keep, "repro.py"))
    c, w, rc, e = run([py, "repro.py"], base, keep=keep)
    print(f"{name} cold                     cpu {c:6.1f} wall {w:6.1f} rc {rc}", flush=True)
    c, w, rc, e = run([py, "repro.py"], {**base, "TORCHINDUCTOR_CACHE_DIR": os.path.join(tempfile.mkdtemp(), "i")}, keep=keep)
    print(f"{name} triton cache warm        cpu {c:6.1f} wall {w:6.1f} rc {rc}", flush=True)
    c, w, rc, e = run([py, "repro.py"], base, keep=keep)
    print(f"{name} both caches warm         cpu {c:6.1f} wall {w:6.1f} rc {rc}", flush=True)
    prof = os.path.join(out, name + ".prof")
    c, w, rc, e = run([py, "-m", "cProfile", "-o", prof, "repro.py"], base, cwd=keep, keep=tempfile.mkdtemp())
    print(f"{name} cold under cProfile      cpu {c:6.1f} wall {w:6.1f} rc {rc}", flush=True)
import pstats
for p in sorted(glob.glob(os.path.join(out, "*.prof")))[:2]:
    print("=====", p)
    s = pstats.Stats(p); s.sort_stats("cumulative").print_stats(45)
