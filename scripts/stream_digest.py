"""A digest of a campaign's case stream and of the signatures its findings
get: for a refactor that must not change what a seed generates or how its
findings bucket, run this before and after and compare the last line.

    python scripts/stream_digest.py --seed 3 --count 200 [--backend fuzz.planted:corrupt_large]

Cases are generated exactly as `shapefuzz run` generates them (the default
strategy for the backend and device) and judged in this process; a planted
backend makes findings cheap, so signatures are exercised too.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _pin_constants():
    """The same generation for both trees: Hypothesis's harvesting of local
    literals off, as fuzz/campaign/generate.py does (the flat layout lacked it)."""
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    empty = Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()


def _imports():
    try:  # the layout by stage
        from fuzz.campaign.driver import CampaignConfig
        from fuzz.campaign.generate import generate
        from fuzz.findings.signature import signature
        from fuzz.judge.runner import run_case
    except ImportError:  # the flat layout before it
        from fuzz.campaign import CampaignConfig
        from fuzz.generate import generate
        from fuzz.runner import run_case
        from fuzz.signature import signature
    return CampaignConfig, generate, signature, run_case


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--backend", default="fuzz.planted:corrupt_large")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--no-judge", action="store_true", help="digest the programs only")
    args = ap.parse_args(argv)
    CampaignConfig, generate, signature, run_case = _imports()
    _pin_constants()
    from strategies import programs

    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed)
    strategy = programs(backend=cfg.backend, device=cfg.device, max_ops=cfg.max_ops,
                        modes=cfg.resolved_modes(), options_menu=cfg.resolved_options())
    total = hashlib.sha1()
    findings = 0
    for i, p in enumerate(generate(strategy, seed_=cfg.seed, count=args.count)):
        text = p.to_json(sort_keys=True)
        sig = ""
        if not args.no_judge:
            v = run_case(p)
            if v.is_finding:
                findings += 1
                sig = signature(v, p).text
        line = f"{i} {hashlib.sha1(text.encode()).hexdigest()[:12]} {sig}"
        total.update(line.encode())
        print(line, flush=True)
    print(f"digest {total.hexdigest()} cases={args.count} findings={findings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
