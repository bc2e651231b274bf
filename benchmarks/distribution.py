"""What a campaign's generator covers: draws the programs `shapefuzz run`
would generate (same strategy, seed and order) and prints the distribution of
op families, ops, pad modes, dim markings, `dynamic=`, compile modes, Inductor
flags, dtypes, layouts, ranks, op counts and calls per case; with --eager N,
also the share of the first N programs eager runs at every call.

    PYTHONPATH=. .venv/bin/python benchmarks/distribution.py --count 1000 --eager 300
    PYTHONPATH=. python3 benchmarks/distribution.py --device cuda --seed 11 --count 4142   # the GPU campaign's
"""

from __future__ import annotations

import argparse
import collections


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--max-ops", type=int, default=6)
    ap.add_argument("--eager", type=int, default=0, metavar="N", help="run the first N programs eagerly (CPU)")
    args = ap.parse_args()

    from fuzz.campaign.driver import CampaignConfig
    from fuzz.campaign.generate import generate
    from fuzz.program.opdb import OPS
    from strategies import programs

    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed, max_ops=args.max_ops)
    strategy = programs(backend=cfg.backend, device=cfg.device, max_ops=cfg.max_ops,
                        modes=cfg.resolved_modes(), options_menu=cfg.resolved_options())  # as run_campaign does
    progs = list(generate(strategy, seed_=cfg.seed, count=args.count))
    n = len(progs)
    tables: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    per_case: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for p in progs:
        for fam in {OPS[o.op].family for o in p.ops}:
            per_case["op family"][fam] += 1
        for dt in {x.dtype for x in p.inputs}:
            per_case["input dtype"][dt] += 1
        for layout in {x.layout for x in p.inputs}:
            per_case["input layout"][layout] += 1
        aliases = [x.alias for x in p.inputs if x.alias]
        per_case["aliasing input"]["yes" if aliases else "no"] += 1
        for a in aliases:
            per_case["alias view"][a["view"] + (" (per call)" if a.get("calls") else "")] += 1
        s = p.settings
        per_case["backward"][str(s.backward)] += 1
        per_case["fullgraph"][str(s.fullgraph)] += 1
        for flag in s.dynamo or {"(none)": None}:
            per_case["Dynamo setting"][flag] += 1
        per_case["marks named from the end"][str(any(x.mark_negative for x in p.inputs))] += 1
        per_case["mark_dynamic min/max"][str(any(x.mark_range for x in p.inputs))] += 1
        for o in p.ops:
            tables["op family (per op)"][OPS[o.op].family] += 1
            tables["op (per op)"][o.op] += 1
            if o.op == "pad":
                tables["pad mode (per pad)"][o.params["mode"]] += 1
        for x in p.inputs:
            tables["dtype (per input)"][x.dtype] += 1
            tables["layout (per input)"][x.layout] += 1
            tables["rank (per input)"][len(x.shape)] += 1
            for m in x.marks:
                tables["marking (per dim)"][m] += 1
        tables["dynamic= (per case)"][str(p.settings.dynamic)] += 1
        tables["mode (per case)"][str(p.settings.mode)] += 1
        for flag in p.settings.options or {"(none)": None}:
            tables["Inductor flag (per case)"][flag] += 1
        tables["ops (per case)"][len(p.ops)] += 1
        tables["calls (per case)"][p.calls] += 1
    print(f"{n} programs: backend {args.backend}, device {args.device}, seed {args.seed}, max_ops {args.max_ops}")
    for name, counts in tables.items():
        total = sum(counts.values())
        top = counts.most_common(None if len(counts) <= 12 else 40)
        print(f"\n{name}: {total}")
        print("  " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in top))
    for name, counts in per_case.items():
        print(f"\n{name} (share of cases that have it)")
        print("  " + ", ".join(f"{k} {100 * v / n:.1f}%" for k, v in counts.most_common()))
    if args.eager:
        _eager_acceptance(progs[:args.eager])


def _eager_acceptance(progs) -> None:
    from fuzz.program.interp import load

    bad = 0
    for p in progs:
        p = type(p).from_dict(dict(p.to_dict(), settings=dict(p.to_dict()["settings"], device="cpu")))
        prog = load(p)
        try:
            for call in range(p.calls):
                prog.program(*prog.make_inputs(call))
        except Exception:  # noqa: BLE001 - any eager error counts against acceptance
            bad += 1
    print(f"\neager accepts {len(progs) - bad}/{len(progs)} ({100 * (1 - bad / len(progs)):.1f}%) at every call (on CPU)")


if __name__ == "__main__":
    main()
