"""How often the default generator draws each capability of the reach issues
(issue 27), as a share of the cases where it applies: draws the programs
`shapefuzz run` would generate (same strategy, seed and order) and, for each
row of REACH, counts the programs it applies to and those that have it.

    PYTHONPATH=. .venv/bin/python scripts/reach.py --count 3000 --seed 1
"""

from __future__ import annotations

import argparse

_FLOATS = ("float32", "float16", "bfloat16", "float64")


def _float_input_of_rank(p, ranks) -> bool:
    return any(len(x.shape) in ranks and x.dtype in _FLOATS for x in p.inputs)


def _interpolates(p, how) -> bool:
    return any(o.op == "interpolate" and how(o.params) for o in p.ops)


_BOOL_PROMOTING = {"ldexp": (0,), "copysign": (0, 1), "floor_divide": (0, 1), "remainder": (0, 1), "fmod": (0, 1),
                   "div_trunc": (0, 1), "div_floor": (0, 1), "where": (0, 1), "masked_fill": (0,)}


_INFOS: dict = {}  # id(program) -> its typecheck: several rows ask it of each program


def _infos(p) -> dict:
    from fuzz.program.typecheck import typecheck

    if id(p) not in _INFOS:
        _INFOS[id(p)] = typecheck(p)
    return _INFOS[id(p)]


def _has_bool(p) -> bool:
    return any(v.dtype == "bool" for v in _infos(p).values())


def _bool_promoted(p) -> bool:
    """ldexp and friends given a bool operand (where and masked_fill: a value operand, not their mask)."""
    info = _infos(p)
    return any(o.op in _BOOL_PROMOTING and any(info[o.args[i]].dtype == "bool" for i in _BOOL_PROMOTING[o.op]
                                               if i < len(o.args)) for o in p.ops)


def _int_value_on_cpu(p) -> bool:
    from fuzz.program.dtypes import INTEGRAL

    return p.device_type() == "cpu" and any(v.dtype in INTEGRAL and v.rank >= 1 for v in _infos(p).values())


# name -> (applies to the program, the program has it)
REACH = {
    "interpolate of a 5-d tensor": (
        lambda p: _float_input_of_rank(p, (5,)),
        lambda p: _interpolates(p, lambda q: q["mode"] == "trilinear" or len(q.get("size", ())) == 3)),
    "interpolate to a literal size=": (
        lambda p: _float_input_of_rank(p, (3, 4, 5)),
        lambda p: _interpolates(p, lambda q: "size" in q)),
    "a bool operand promoted (ldexp and friends)": (_has_bool, _bool_promoted),
    "an integer mm, bmm or matmul (CPU)": (
        _int_value_on_cpu, lambda p: any(o.op in ("mm_int", "bmm_int", "matmul_int") for o in p.ops)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=3000)
    args = ap.parse_args()

    from fuzz.campaign.driver import CampaignConfig, campaign_strategy
    from fuzz.campaign.generate import generate

    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed)
    progs = list(generate(campaign_strategy(cfg), seed_=cfg.seed, count=args.count))
    print(f"{len(progs)} programs: backend {args.backend}, device {args.device}, seed {args.seed}")
    for name, (applies, has) in REACH.items():
        where = [p for p in progs if applies(p)]
        hits = sum(1 for p in where if has(p))
        share = f"{100 * hits / len(where):.1f}%" if where else "-"
        print(f"  {name}: {hits} of {len(where)} cases where it applies ({share}); {hits} of {len(progs)} in all")


if __name__ == "__main__":
    main()
