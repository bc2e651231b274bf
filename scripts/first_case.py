"""The first case at which a default CPU campaign meets a planted backend (the bar: within 2000 cases).

Draws the stream `shapefuzz run --backend fuzz.planted:NAME --seed S [--draw D]` draws (the same for every
plant: none takes Inductor's options). For each plant it judges only the programs that hold its trigger (one
of some ops, or a row of scripts/reach.py; judging all 2000 would take an hour here), with the plant and with
stock eager. Prints each candidate's verdicts, and the first case whose plant verdict is a finding and whose
eager verdict is not. A trigger narrower than the plant can only make that case later. Confirm a figure with
the CLI:

    shapefuzz run --backend fuzz.planted:NAME --seed S --max-cases N+1 --workers 1 --no-shrink --no-triage

Example:
    PYTHONPATH=. .venv/bin/python scripts/first_case.py wrong_on_float_bits_kept=view_dtype \
        wrong_gradients_on_item_of_another=item_clamp_by --seed 4
"""

import argparse
import dataclasses
import os
import sys


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plants", nargs="+", metavar="NAME=OP[,OP...]|NAME=row:TEXT",
                    help="a plant of fuzz/planted.py and what a program must hold to be judged for it: one of "
                         "the ops, or a row of scripts/reach.py whose name holds TEXT")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--draw", default="pair-aimed", help="pair-aimed (shapefuzz run's default), blind or swarm")
    args = ap.parse_args()

    from fuzz.campaign.draws import draw_flags
    from fuzz.campaign.driver import CampaignConfig, campaign_strategy
    from fuzz.campaign.generate import generate
    from fuzz.judge.runner import run_case
    from fuzz import planted as planted_module
    from fuzz.planted import PLANTED
    from strategies.programs import takes_inductor_options

    plants = {}
    for arg in args.plants:
        name, _, trigger = arg.partition("=")
        # a plant not (yet) in PLANTED too: this is how one is measured before it is added
        if not (name in PLANTED or callable(getattr(planted_module, name, None))) or not trigger:
            sys.exit(f"first_case.py: {arg!r} is not NAME=OP[,OP...] or NAME=row:TEXT with NAME one of "
                     f"{', '.join(sorted(PLANTED))} or another backend of fuzz/planted.py")
        if takes_inductor_options(f"fuzz.planted:{name}"):
            sys.exit(f"first_case.py: {name} takes Inductor's options: its stream is not the others'")
        plants[name] = _trigger(trigger)
    cfg = CampaignConfig(backend=f"fuzz.planted:{next(iter(plants))}", device="cpu", seed=args.seed,
                         **draw_flags(args.draw))
    first, judged = {}, dict.fromkeys(plants, 0)
    for i, p in enumerate(generate(campaign_strategy(cfg), seed_=cfg.seed, count=args.count)):
        for name, ops in plants.items():
            if name in first or not ops(p):
                continue
            judged[name] += 1
            planted = run_case(_on(p, f"fuzz.planted:{name}"))
            eager = run_case(_on(p, "eager"))
            print(f"case {i}, {name}: plant {planted.outcome.value}, eager {eager.outcome.value}", flush=True)
            if planted.outcome.is_finding and not eager.outcome.is_finding:
                first[name] = i
        if len(first) == len(plants):
            break
    for name in plants:
        at = f"case {first[name]}" if name in first else f"not in {args.count} cases"
        print(f"{name}: {at} ({judged[name]} candidates judged; {args.draw}, seed {args.seed})")


def _trigger(text: str):
    """A test of a program: it holds one of the ops `OP,OP,...`, or has a row of scripts/reach.py whose name
    holds `row:TEXT`."""
    if not text.startswith("row:"):
        ops = set(text.split(","))
        return lambda p: any(o.op in ops for o in p.ops)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import reach

    rows = [has for row, (_, has) in reach.REACH.items() if text[4:] in row]
    if not rows:
        sys.exit(f"first_case.py: no row of scripts/reach.py has {text[4:]!r} in its name")
    return lambda p: any(has(p) for has in rows)


def _on(p, backend: str):
    return dataclasses.replace(p, settings=dataclasses.replace(p.settings, backend=backend))


if __name__ == "__main__":
    main()
