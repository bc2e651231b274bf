"""How often the default generator draws each capability of the reach issues
(issue 27), as a share of the cases where it applies: draws the programs
`shapefuzz run` would generate (same strategy, seed and order) and, for each
row of REACH, counts the programs it applies to and those that have it.
With --pairs, also the pairwise coverage of the same programs (issue 40): the
share of feasible (feature of a value, op that consumes it) pairs they hold,
and the missing pairs (scripts/pairs.py says what a pair and feasible are).

    PYTHONPATH=. .venv/bin/python scripts/reach.py --count 3000 --seed 1 [--swarm]
    PYTHONPATH=. .venv/bin/python scripts/reach.py --count 2000 --seed 0 --pairs [--json]
"""

from __future__ import annotations

import argparse

from fuzz.program.opdb import OPS

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


def _aliased(p) -> bool:
    return any(x.alias for x in p.inputs)


def _alias_mutated_then_read(p) -> bool:
    """An in-place op writes one of two inputs that share storage, and a later op reads the other (or a view of it)."""
    info = _infos(p)
    shared = {x.name for x in p.inputs if x.alias} | {x.alias["of"] for x in p.inputs if x.alias}
    for i, o in enumerate(p.ops):
        if not OPS[o.op].mutates or o.args[0] not in shared:
            continue
        written = o.args[0]
        root = info[written].root
        for later in p.ops[i + 1:]:
            if any(info[a].root == root and a != written and not _derived_from(p, a, written) for a in later.args):
                return True
    return False


def _derived_from(p, name, source) -> bool:
    """Whether value `name` is `source` or computed from it (following first operands)."""
    by_out = {o.out: o for o in p.ops}
    while name in by_out:
        if name == source:
            return True
        name = by_out[name].args[0]
    return name == source


def _int_value(p) -> bool:
    from fuzz.program.dtypes import INTEGRAL

    return any(v.dtype in INTEGRAL and v.rank >= 1 for v in _infos(p).values())


def _float_value(p) -> bool:
    return any(v.dtype in _FLOATS and v.rank >= 1 for v in _infos(p).values())


def _resizing_dtype_view(p) -> bool:
    from fuzz.program.dtypes import ITEMSIZE

    info = _infos(p)
    return any(o.op == "view_dtype" and ITEMSIZE[o.params["to"]] != ITEMSIZE[info[o.args[0]].dtype] for o in p.ops)


def _descendants(p, name) -> set:
    """Values computed, directly or not, from `name`."""
    out = {name}
    for o in p.ops:
        if any(a in out for a in o.args):
            out.add(o.out)
    return out


_MATRIX_OPS = tuple(o.name for o in OPS.family("matrix"))


def _has_matrix(p) -> bool:
    return any(o.op in _MATRIX_OPS for o in p.ops)


def _cropping_pad_into_matrix(p) -> bool:
    """A constant pad with a negative width on two dims or more, of a computed value, feeding a matrix op."""
    from fuzz.program.ops.pads import cropped_dims

    inputs = {x.name for x in p.inputs}
    for o in p.ops:
        if o.op != "pad" or o.args[0] in inputs:
            continue
        if cropped_dims(o.params["pad"]) >= 2:
            after = _descendants(p, o.out)
            if any(m.op in _MATRIX_OPS and any(a in after for a in m.args) for m in p.ops):
                return True
    return False


def _computed(p) -> bool:
    return bool(p.ops)


def _as_strided_of_computed(p) -> bool:
    """as_strided_free of an op's result (of an input, it strides the input's contiguous copy: counted too,
    as the plant counts it, but the row asks for computed values)."""
    inputs = {x.name for x in p.inputs}
    return any(o.op == "as_strided_free" and o.args[0] not in inputs for o in p.ops)


def _any_all_of_uint8(p) -> bool:
    info = _infos(p)
    return any(o.op in ("any", "all") and info[o.args[0]].dtype == "uint8" for o in p.ops)


def _uint8_arithmetic_after_any_all(p) -> bool:
    info = _infos(p)
    for o in p.ops:
        if o.op in ("any", "all") and info[o.args[0]].dtype == "uint8":
            if any(OPS[m.op].family in ("binary", "pointwise", "inplace") and o.out in m.args for m in p.ops):
                return True
    return False


def _literal_shape_fits(p) -> bool:
    """A value whose element count is never 0 and some literal k >= 2 divides at every call."""
    from fuzz.program.ops.views import _literal_lasts

    return any(v.rank >= 1 and _literal_lasts(v) for v in _infos(p).values())


def _has_dims(p) -> bool:
    return any(v.rank >= 1 for v in _infos(p).values())


def _unbacked_broadcast(p) -> bool:
    """A pointwise op of two or more operands (the binary and in-place families: the plant's ops; not a matrix
    product's contraction, nor cat) where a size the program fixes but the compiler cannot know (mask_keep)
    meets another size (not a literal 1, which broadcasts whatever the size)."""
    info = _infos(p)
    for o in p.ops:
        shapes = [info[a].shape for a in o.args]
        if len(shapes) < 2 or OPS[o.op].family not in ("binary", "inplace"):
            continue
        for i, a in enumerate(shapes):
            for b in shapes[i + 1:]:
                if any((x.is_exact_unbacked or y.is_exact_unbacked) and x.key != y.key and "1" not in (x.key, y.key)
                       for x, y in zip(reversed(a), reversed(b))):
                    return True
    return False


def _data_dependent_size(p) -> bool:
    return any(d.is_data_dependent for v in _infos(p).values() for d in v.shape)


_ITEM_ARGUMENT = ("item_clamp", "item_full", "item_pad")


def _dynamic(p) -> bool:
    return bool(p.sizes) and any(len(set(v)) > 1 for v in p.sizes.values())


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
    "an aliased input written, then its alias read": (_aliased, _alias_mutated_then_read),
    "a view(dtype) that changes the element size": (_int_value, _resizing_dtype_view),
    "a float viewed as an integer and back": (
        _float_value, lambda p: any(o.op == "view_dtype" and o.params.get("back") for o in p.ops)),
    "a cropping pad (two dims) of a computed value feeding a matrix op": (_has_matrix, _cropping_pad_into_matrix),
    "arithmetic on any/all of uint8 (uint8, not bool)": (_any_all_of_uint8, _uint8_arithmetic_after_any_all),
    "as_strided (free sizes, strides, offset) of an op's result": (_computed, _as_strided_of_computed),
    "as_strided past the storage on purpose": (
        _computed, lambda p: any(o.op == "as_strided_free" and o.params.get("way") == "oob" for o in p.ops)),
    "a reshape to a literal shape (reshape_lit)": (
        _literal_shape_fits, lambda p: any(o.op == "reshape_lit" for o in p.ops)),
    "an unbacked size broadcast against another size": (_data_dependent_size, _unbacked_broadcast),
    "an item() value as a clamp bound, fill value or pad width": (
        _has_dims, lambda p: any(o.op in _ITEM_ARGUMENT for o in p.ops)),
    "a squeeze of a size dim (squeeze_dynamic)": (
        _dynamic, lambda p: any(o.op == "squeeze_dynamic" for o in p.ops)),
}


# ---- issue 40's first list: what could not be written (a block of its own) ----------------------------------

def _unbacked_marked(p) -> set:
    return {d for x in p.inputs for d, m in zip(x.shape, x.marks) if m == "unbacked" and isinstance(d, str)}


def _held_unbacked(p, name) -> bool:
    """A value with a size the compiler holds as unbacked: data-dependent, or of a symbol marked unbacked."""
    marked = _unbacked_marked(p)
    return any(d.is_data_dependent or d.syms & marked for d in _infos(p)[name].shape)


def _unbacked_somewhere(p) -> bool:
    return _data_dependent_size(p) or bool(_unbacked_marked(p))


def _unbacked_one_broadcast(p) -> bool:
    from fuzz.judge.by_design import unbacked_one_broadcast

    return unbacked_one_broadcast(p)


def _float_input(p) -> bool:
    return any(x.dtype in _FLOATS and len(x.shape) >= 1 for x in p.inputs)


def _backward_with_dims(p) -> bool:
    return p.settings.backward and _has_dims(p)


REACH.update({
    "an unbacked size that is 1 broadcast against a larger size": (_data_dependent_size, _unbacked_one_broadcast),
    "a squeeze of an unbacked size (data-dependent, or marked unbacked)": (
        _unbacked_somewhere, lambda p: any(o.op == "squeeze_dynamic" and _held_unbacked(p, o.args[0]) for o in p.ops)),
    "a reshape of an unbacked size to a literal shape ((-1, k), (-1, 1), (1,))": (
        _unbacked_somewhere, lambda p: any(o.op == "reshape_lit" and _held_unbacked(p, o.args[0]) for o in p.ops)),
    "a float viewed as an integer and kept so": (
        _float_input, lambda p: any(o.op == "view_dtype" and not o.params.get("back")
                                    and _infos(p)[o.args[0]].dtype in _FLOATS for o in p.ops)),
    "an item() value of another tensor as a clamp bound, in a backward program": (
        _backward_with_dims, lambda p: any(o.op == "item_clamp_by" for o in p.ops)),
})


def _load_cache(path: str, key: dict) -> dict:
    """The feasibility answers a --cache file holds for this backend, device and op set ({} otherwise)."""
    import os

    from fuzz.datafile import DataFileError, read_json

    if not os.path.exists(path):
        return {}
    try:
        d = read_json(path, 50_000_000)
    except DataFileError as e:
        raise SystemExit(f"reach.py: {e}") from None
    answers = d.get("answers") if isinstance(d, dict) and d.get("key") == key else None
    if not isinstance(answers, dict):
        return {}  # another backend, device or op set: searched again
    return {k: v for k, v in answers.items() if isinstance(k, str) and isinstance(v, bool)}


def pair_report(progs, cfg, cache: str | None) -> dict:
    """--pairs: pairwise coverage of progs (scripts/pairs.py), by grain."""
    import json

    import pairs
    from fuzz.devices import device_type
    from fuzz.files import write_atomic

    key = {"backend": cfg.backend, "device": cfg.device, "ops": sorted(o.name for o in OPS)}
    feas = pairs.Feasibility(cfg.backend, cfg.device, cache=_load_cache(cache, key) if cache else None)
    out = pairs.coverage(progs, feas, device_type(cfg.device), cfg.resolved_modes())
    if cache:
        write_atomic(cache, json.dumps({"key": key, "answers": feas.answers}))
    return out


def print_pairs(cov: dict) -> None:
    for grain, c in cov.items():
        print(f"pairwise coverage ({grain} grain): {c['seen']} of {c['feasible']} feasible pairs "
              f"({100 * c['share']:.1f}%); {len(c['missing'])} missing; the search found "
              f"{100 * c['search_recall']:.2f}% of the pairs the programs hold")
    for grain, c in cov.items():
        if c["search_missed"]:
            print(f"held but not found by the search ({grain} grain): "
                  + ", ".join(f"{f} x {op}" for f, op in c["search_missed"]))
        by_feature: dict = {}
        for f, op in c["missing"]:
            by_feature.setdefault(f, []).append(op)
        print(f"missing pairs ({grain} grain), by feature:")
        for f, ops in by_feature.items():
            print(f"  {f} ({len(ops)}): {', '.join(ops)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--swarm", action="store_true", help="as `shapefuzz run --swarm` draws")
    ap.add_argument("--pair-aimed", action="store_true", help="as `shapefuzz run --pair-aimed` draws")
    ap.add_argument("--pairs", action="store_true", help="also the pairwise coverage and the missing pairs")
    ap.add_argument("--cache", help="--pairs: a JSON file keeping the feasibility answers between runs")
    ap.add_argument("--json", action="store_true", help="print the rows (and pairs) as JSON")
    args = ap.parse_args()

    from fuzz.campaign.driver import CampaignConfig, campaign_strategy
    from fuzz.campaign.generate import generate

    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed, swarm=args.swarm,
                         pair_aimed=args.pair_aimed)
    progs = list(generate(campaign_strategy(cfg), seed_=cfg.seed, count=args.count))
    rows = {}
    for name, (applies, has) in REACH.items():
        where = [p for p in progs if applies(p)]
        rows[name] = {"applies": len(where), "has": sum(1 for p in where if has(p))}
    cov = pair_report(progs, cfg, args.cache) if args.pairs else None
    if args.json:
        import json

        print(json.dumps({"programs": len(progs), "backend": args.backend, "device": args.device, "seed": args.seed,
                          "swarm": args.swarm, "pair_aimed": args.pair_aimed, "rows": rows,
                          **({"pairs": cov} if cov else {})}, indent=1))
        return
    print(f"{len(progs)} programs: backend {args.backend}, device {args.device}, seed {args.seed}"
          + (", swarm" if args.swarm else "") + (", pair-aimed" if args.pair_aimed else ""))
    for name, r in rows.items():
        share = f"{100 * r['has'] / r['applies']:.1f}%" if r["applies"] else "-"
        print(f"  {name}: {r['has']} of {r['applies']} cases where it applies ({share}); "
              f"{r['has']} of {len(progs)} in all")
    if cov:
        print_pairs(cov)


if __name__ == "__main__":
    main()
