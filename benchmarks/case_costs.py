"""Where a campaign's time goes: regenerates the programs of a state dir
(same strategy, seed and order as `shapefuzz run`), joins them with the
per-case seconds of its cases.jsonl and prints, for each feature (compile
mode, Inductor flag, backward, op family, op count, recompiles, ...), the
share of cases that have it, their mean seconds and their share of all case
seconds. Run it with the Hypothesis version the campaign ran with (on the same
machine), or the regenerated programs differ.

    PYTHONPATH=. python3 benchmarks/case_costs.py runs/gpu/state [--top 12]
"""

from __future__ import annotations

import argparse
import collections
import json
import os


def load_cases(state_dir: str) -> dict[int, dict]:
    cases = {}
    with open(os.path.join(state_dir, "cases.jsonl")) as f:
        for line in f:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:  # a torn last line
                continue
            if "seconds" in row:
                cases[row["i"]] = row
    return cases


def campaign_config(state_dir: str):
    from fuzz.campaign.driver import CampaignConfig
    from strategies.settings import OPTIONS_CPU, OPTIONS_CUDA

    with open(os.path.join(state_dir, "config.json")) as f:
        c = json.load(f)
    as_json = lambda opts: json.loads(json.dumps(opts))  # noqa: E731 - config.json holds tuples as lists
    menu = next((name for name, opts in (("cuda", OPTIONS_CUDA), ("cpu", OPTIONS_CPU), ("none", {}))
                 if as_json(opts) == c.get("options", {})), None)
    if menu is None:
        raise SystemExit(f"{state_dir}: its Inductor flag menu is none of cuda/cpu/none")
    return CampaignConfig(backend=c["backend"], device=c["device"], seed=c["seed"], max_ops=c["max_ops"],
                          modes=tuple(c["modes"]), options_menu=menu,
                          families=tuple(c["families"]) if c.get("families") else None,
                          ops=tuple(c["ops"]) if c.get("ops") else None)


def features(p) -> list[str]:
    """The features a case's time is attributed to (a case counts in each)."""
    from fuzz.program.opdb import OPS

    s = p.settings
    out = [f"mode={s.mode}", f"backward={s.backward}", f"ops={len(p.ops)}", f"calls={p.calls}",
           f"dynamic={s.dynamic}", f"fullgraph={s.fullgraph}"]
    out += [f"flag {k}={v}" for k, v in (s.options or {}).items()]
    out += [f"dynamo {k}={v}" for k, v in (s.dynamo or {}).items()]
    out += sorted({f"family {OPS[o.op].family}" for o in p.ops})
    out += sorted({f"op {o.op}" for o in p.ops})
    out += sorted({f"marking {m}" for x in p.inputs for m in x.marks if m != "static"})
    out += sorted({f"dtype {x.dtype}" for x in p.inputs})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state")
    ap.add_argument("--top", type=int, default=15, help="rows per table")
    ap.add_argument("--jsonl", help="also write one row per case (its features, seconds, outcome) here")
    args = ap.parse_args()

    from fuzz.campaign.generate import generate

    cases = load_cases(args.state)
    if not cases:
        raise SystemExit(f"{args.state}: no timed cases")
    cfg = campaign_config(args.state)
    progs = dict(enumerate(generate(cfg.kind().strategy(cfg), seed_=cfg.seed, count=max(cases) + 1)))
    total = sum(r["seconds"] for r in cases.values())
    n = len(cases)
    by: dict[str, list] = collections.defaultdict(list)
    for i, row in cases.items():
        for f in features(progs[i]) + [f"recompiles={row.get('recompiles')}", f"outcome={row.get('outcome')}"]:
            by[f].append(row["seconds"])
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for i, row in sorted(cases.items()):
                f.write(json.dumps({**row, "features": features(progs[i])}) + "\n")
    mean = total / n
    print(f"{n} timed cases, {total:.0f} case-seconds, mean {mean:.2f} s "
          f"(compile {sum(r.get('compile_seconds', 0) for r in cases.values()) / total:.0%})")
    rows = [(f, len(v), sum(v)) for f, v in by.items()]
    for title, key in (("share of case-seconds", lambda r: -r[2]),
                       ("mean seconds (features in >= 2% of cases)", lambda r: -r[2] / r[1])):
        print(f"\nby {title}:")
        print(f"  {'feature':44} {'cases':>6} {'mean s':>7} {'x mean':>6} {'time':>6}")
        for f, c, s in sorted((r for r in rows if r[1] >= 0.02 * n), key=key)[:args.top]:
            print(f"  {f[:44]:44} {c / n:6.1%} {s / c:7.2f} {s / c / mean:6.2f} {s / total:6.1%}")


if __name__ == "__main__":
    main()
