"""How many drawn programs eager itself refuses (the judge's `invalid` cases, where the compiled run fails
too): draws the programs `shapefuzz run` would draw (same strategy, seed and order; --pair-aimed or --swarm
as there) and runs each through the judge's loop with eager in place of the compiled callable, backward
too where the program asks for gradients. No compiler runs, so it takes seconds per hundred programs.

    PYTHONPATH=. .venv/bin/python benchmarks/eager_valid.py --count 600 --seed 1 --pair-aimed [--json FILE]

Prints the count and each refusal's message, by message; --json also writes the refused programs.
as_strided_free's `oob` draws are refused on purpose (docs/generator.md): they are counted apart.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import warnings


def refusals(progs) -> list:
    """(program, stage, message) for each program eager refuses at some call of its schedule."""
    import torch

    from fuzz.judge import loop
    from fuzz.judge.compare import compare_outputs
    from fuzz.program.interp import load

    warnings.filterwarnings("ignore")
    torch._logging.set_logs(all=logging.CRITICAL)
    out = []
    for p in progs:
        prog = load(p)
        r = loop.run_schedule(prog.program, prog.program, prog.make_inputs, prog.mark_inputs, p.calls,
                              compare_outputs, p.settings.device, False, (), backward=prog.backward)
        if r["status"] != loop.AGREE:
            out.append((p, r.get("stage"), repr(r.get("eager_error"))[:200]))
    return out


def on_purpose(p) -> bool:
    return any(o.op == "as_strided_free" and o.params.get("way") == "oob" for o in p.ops)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--swarm", action="store_true", help="as `shapefuzz run --swarm` draws")
    ap.add_argument("--pair-aimed", action="store_true", help="as `shapefuzz run --pair-aimed` draws")
    ap.add_argument("--json", help="write the refused programs and their messages to this file")
    args = ap.parse_args()

    from fuzz.campaign.driver import CampaignConfig, campaign_strategy
    from fuzz.campaign.generate import generate

    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed, swarm=args.swarm,
                         pair_aimed=args.pair_aimed)
    progs = list(generate(campaign_strategy(cfg), seed_=cfg.seed, count=args.count))
    bad = refusals(progs)
    meant = sum(1 for p, _, _ in bad if on_purpose(p))
    print(f"{len(progs)} programs: eager refuses {len(bad)} ({100 * len(bad) / max(len(progs), 1):.1f}%), "
          f"{meant} of them as_strided_free oob on purpose")
    for (stage, msg), n in collections.Counter((s, m) for _, s, m in bad).most_common():
        print(f"  {n} {stage}: {msg}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([{"stage": s, "error": m, "program": p.to_dict()} for p, s, m in bad], f)


if __name__ == "__main__":
    main()
