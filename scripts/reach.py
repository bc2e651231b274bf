"""How often the default generator draws each capability it was widened to
reach, as a share of the cases where it applies: draws the programs
`shapefuzz run` would generate (same strategy, seed and order) and, for each
row of REACH, counts the programs it applies to and those that have it; rows
of STEP_REACH are counted over as many torch_xla step programs, drawn as
`shapefuzz run --backend xla` draws them (torch_xla is not needed to draw).
With --pairs, also the pairwise coverage of the same programs: the
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



# -- rare conjunctions: each part is common, the conjunction was drawn 0 times in 8000 programs -------------

def _writes_input(p) -> bool:
    """An in-place op writes an input (or a view of one)."""
    info = _infos(p)
    inputs = {x.name for x in p.inputs}
    return any(OPS[o.op].mutates and info[o.args[0]].root in inputs for o in p.ops)


def _dtype_view_after_source_write(p) -> bool:
    """A view(dtype) that changes the element size (not a float's view and back), of a computed value of its
    own storage, returned (a view), after an in-place write to the input that value is computed from."""
    from fuzz.program.dtypes import ITEMSIZE

    info = _infos(p)
    inputs = {x.name for x in p.inputs}
    for i, o in enumerate(p.ops):
        if not OPS[o.op].mutates or info[o.args[0]].root not in inputs:
            continue
        source = info[o.args[0]].root
        after = _descendants(p, source)
        for v in p.ops[i + 1:]:
            if v.op == "view_dtype" and info[v.args[0]].root not in inputs and v.args[0] in after \
                    and v.out in p.outputs and not v.params.get("back") \
                    and ITEMSIZE[v.params["to"]] != ITEMSIZE[info[v.args[0]].dtype]:
                return True
    return False


def _flips_at_equal_sizes(p) -> bool:
    """An aliasing input whose aliasing changes between two consecutive calls of the same sizes."""
    for x in p.inputs:
        flips = (x.alias or {}).get("calls")
        if flips and any(flips[c] != flips[c + 1] and p.sizes_at(c) == p.sizes_at(c + 1)
                         for c in range(min(len(flips), p.calls) - 1)):
            return True
    return False


def _offset_member(p, x) -> str | None:
    """Of an alias pair (input x aliasing its base), the member at a storage offset the other is not at: a
    narrow window (start >= 1) of the base. (Of a "before" pair the base is at the offset: it is both.)"""
    return x.name if x.alias["view"] == "narrow" and x.alias.get("start", 0) >= 1 else None


def _base_written_then_offset_view(p) -> bool:
    """An in-place write to the base of an alias pair, then a view of the pair's offset member returned."""
    views = {o.name for o in OPS.family("view")}
    by_out = {o.out: o for o in p.ops}
    for x in p.inputs:
        if not x.alias:
            continue
        member, base = _offset_member(p, x), x.alias["of"]
        if member is None:
            continue
        for i, o in enumerate(p.ops):
            if OPS[o.op].mutates and o.args[0] == base:
                for v in p.ops[i + 1:]:
                    if v.op in views and v.out in p.outputs and _view_chain_source(by_out, v.args[0]) == member:
                        return True
    return False


def _view_chain_source(by_out: dict, name: str) -> str:
    """The value a chain of view-family ops starts from (name itself where no view made it)."""
    while name in by_out and OPS[by_out[name].op].family == "view":
        name = by_out[name].args[0]
    return name


def _shrink_only_crops(p) -> list:
    """Constant pads of computed rank-2 values whose every width is a literal <= 0 (one < 0), read by matrix
    products only."""
    info = _infos(p)
    inputs = {x.name for x in p.inputs}
    out = []
    for o in p.ops:
        if o.op != "pad" or o.params.get("mode") != "constant" or o.args[0] in inputs or info[o.args[0]].rank != 2:
            continue
        ws = o.params.get("pad", [])
        if not all(isinstance(w, int) and w <= 0 for w in ws) or not any(w < 0 for w in ws):
            continue
        readers = [m for m in p.ops if o.out in m.args]
        if readers and all(m.op in _MATRIX_OPS for m in readers):
            out.append(o)
    return out


def _eval_norm_upstream_of_shrink_crop(p) -> bool:
    by_out = {o.out: o for o in p.ops}
    for crop in _shrink_only_crops(p):
        seen, todo = set(), [crop.args[0]]
        while todo:
            name = todo.pop()
            call = by_out.get(name)
            if call is None or name in seen:
                continue
            seen.add(name)
            if call.op == "batch_norm" and not call.params.get("training"):
                return True
            todo += call.args
    return False


def _permuted(p, name) -> bool:
    """Whether a value's dims are not in storage order: an input laid out permuted, transposed or channels_last
    (or a transposing alias), a permute or transpose, or a view or pointwise result of such a value (eager's
    pointwise ops keep their first operand's layout)."""
    by_out = {o.out: o for o in p.ops}
    while name in by_out:
        call = by_out[name]
        if call.op in ("permute", "transpose"):
            return True
        if OPS[call.op].family not in ("view", "pointwise", "binary"):
            return False
        name = call.args[0]
    x = next(x for x in p.inputs if x.name == name)
    return x.layout in ("permuted", "transposed", "channels_last") or (x.alias or {}).get("view") == "transpose"


def _dense(p, name) -> bool:
    """A row-major value: a contiguous input of its own storage, or an op's fresh result that is not permuted."""
    by_out = {o.out: o for o in p.ops}
    if name not in by_out:
        x = next(x for x in p.inputs if x.name == name)
        return x.layout == "contiguous" and not x.alias
    return OPS[by_out[name].op].family not in ("view", "shape") and not _permuted(p, name)


def _binary_ops(p) -> list:
    return [o for o in p.ops if OPS[o.op].family == "binary" and len(o.args) >= 2]


def _mixed_layout_binary_returned(p) -> bool:
    info = _infos(p)
    return any(o.out in p.outputs and info[o.args[0]].rank >= 2 and info[o.args[0]].rank == info[o.args[1]].rank
               and _permuted(p, o.args[0]) and _dense(p, o.args[1]) for o in _binary_ops(p))


def _two_float_dtypes(p) -> bool:
    return len({v.dtype for v in _infos(p).values() if v.dtype in _FLOATS}) >= 2


def _mixed_precision_binary(p) -> bool:
    info = _infos(p)
    return any(info[o.args[0]].dtype in _FLOATS and info[o.args[1]].dtype in _FLOATS
               and info[o.args[0]].dtype != info[o.args[1]].dtype for o in _binary_ops(p))


def _bool_first_promoted(p) -> bool:
    """A binary op whose first operand is bool and second a number: the result promotes to the number's type."""
    info = _infos(p)
    return any(info[o.args[0]].dtype == "bool" and info[o.args[1]].dtype != "bool"
               and info[o.out].dtype != "bool" for o in _binary_ops(p))


def _int_bmm_of_ones(p) -> bool:
    """bmm_int, or matmul_int of rank-3 operands, whose batch and row dims are both 1 at some call."""
    info = _infos(p)
    for o in p.ops:
        if o.op in ("bmm_int", "matmul_int") and info[o.args[0]].rank == 3:
            batch, rows = info[o.args[0]].shape[0], info[o.args[0]].shape[1]
            if any(b == 1 and r == 1 for b, r in zip(batch.values, rows.values)):
                return True
    return False


def _float_rank4(p) -> bool:
    return any(v.rank == 4 and v.dtype in _FLOATS for v in _infos(p).values())


def _edge_pad_of_permuted_4d(p) -> bool:
    info = _infos(p)
    return any(o.op == "pad" and o.params.get("mode") in ("reflect", "replicate") and info[o.args[0]].rank == 4
               and _permuted(p, o.args[0]) for o in p.ops)


def _has_permuted(p) -> bool:
    return any(v.rank >= 2 and _permuted(p, n) for n, v in _infos(p).items())


def _index_of_pointwise_over_permuted(p) -> bool:
    """index_select or gather of a pointwise (or binary) result over a permuted view, returned."""
    by_out = {o.out: o for o in p.ops}
    for o in p.ops:
        src = by_out.get(o.args[0]) if o.op in ("index_select", "gather") and o.out in p.outputs else None
        if src is not None and OPS[src.op].family in ("pointwise", "binary") and _permuted(p, src.args[0]):
            return True
    return False


def _backward(p) -> bool:
    return p.settings.backward


_BACKWARD_WRITABLE_VIEWS = ("slice", "narrow", "transpose", "permute", "unsqueeze", "squeeze", "flatten", "reshape")


def _backward_write_of_clone_or_view(p) -> bool:
    """A backward program writes in place a clone, or a view (of an op's result) autograd saves nothing of."""
    by_out = {o.out: o for o in p.ops}
    for o in p.ops:
        made = by_out.get(o.args[0]) if p.settings.backward and OPS[o.op].mutates else None
        if made is not None and (made.op == "clone" or made.op in _BACKWARD_WRITABLE_VIEWS):
            return True
    return False


def _backward_non_differentiable(p) -> bool:
    """A backward program holds an op eager does not differentiate (an item()-valued fill, say)."""
    return p.settings.backward and any(not OPS[o.op].grad for o in p.ops)


# -- step programs (torch_xla kind) ---------------------------------------------------------------------------

# Writes eager refuses where the written elements share a location (fill_ and zero_ it allows).
_REFUSED_ON_OVERLAP = ("add_", "sub_", "mul_", "copy_", "neg_", "abs_", "setitem")


def _step_expanded_views(p) -> set:
    """Names of p's expanded views and the views of them."""
    from fuzz.program.step_ir import OPS as STEP_OPS

    out = set()
    for _, s in p.steps():
        if s.op == "expand" or (STEP_OPS[s.op].kind == "view" and s.args and s.args[0] in out):
            out.add(s.out)
    return out


def _step_has_expanded(p) -> bool:
    return bool(_step_expanded_views(p))


def _step_refused_overlap_write(p) -> bool:
    expanded = _step_expanded_views(p)
    return any(s.op in _REFUSED_ON_OVERLAP and s.args and s.args[0] in expanded for _, s in p.steps())


_STEP_WRITES = ("add_", "sub_", "mul_", "copy_", "fill_", "zero_", "neg_", "abs_", "setitem")


def _step_strided_bases(p) -> list:
    """(the op that made the base, whether an in-place op wrote the base's name before) for each as_strided
    with the implicit offset, and for each with an offset as (None, written)."""
    made, written, out = {}, set(), []
    for _, s in p.steps():
        if s.op == "as_strided":
            out.append((made.get(s.args[0]) if "offset" not in s.params else None, s.args[0] in written))
        if s.op in _STEP_WRITES and s.args:
            written.add(s.args[0])
        if s.out:
            made[s.out] = s.op
            written.discard(s.out)  # a rebind is a new value
    return out


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
    # rare conjunctions of common parts
    "a size-changing view(dtype) of a computed value, returned, after a write to its source input": (
        _writes_input, _dtype_view_after_source_write),
    "aliasing that flips between two calls of the same sizes, one member written, the other read": (
        _aliased, lambda p: _flips_at_equal_sizes(p) and _alias_mutated_then_read(p)),
    "a write to the base of an alias pair, then a view of its offset member returned": (
        _aliased, _base_written_then_offset_view),
    "a constant pad that only shrinks (widths <= 0) of a computed 2-d value, read by matrix products only": (
        _has_matrix, lambda p: bool(_shrink_only_crops(p))),
    "eval-mode batch_norm upstream of such a shrinking crop": (
        lambda p: _has_matrix(p) and any(o.op == "batch_norm" and not o.params["training"] for o in p.ops),
        _eval_norm_upstream_of_shrink_crop),
    "a binary op of a permuted first and a dense second operand, returned": (
        lambda p: bool(_binary_ops(p)), _mixed_layout_binary_returned),
    "a binary op of two floating dtypes (mixed precision)": (_two_float_dtypes, _mixed_precision_binary),
    "a binary op with a bool first operand and a number second (promoted)": (_has_bool, _bool_first_promoted),
    "an integer batched product with batch and row dims 1 (CPU)": (_int_value_on_cpu, _int_bmm_of_ones),
    "a reflect or replicate pad of a permuted or channels_last 4-d value": (_float_rank4, _edge_pad_of_permuted_4d),
    "index_select or gather of a pointwise result over a permuted view, returned": (
        _has_permuted, _index_of_pointwise_over_permuted),
    "backward: an in-place write to a clone or to a view autograd saves nothing of": (
        _backward, _backward_write_of_clone_or_view),
    "backward: an op eager does not differentiate (an item()-valued fill)": (_backward, _backward_non_differentiable),
}

# Rows of the torch_xla step programs (`shapefuzz run --backend xla` draws them): name -> (applies, has).
STEP_REACH = {
    "a write eager refuses (add_, copy_, ...) through an expanded view": (
        _step_has_expanded, _step_refused_overlap_write),
    # what could not be written: an as_strided past element 0
    "as_strided with the implicit offset of a select past element 0": (
        lambda p: True, lambda p: any(made == "select" for made, _ in _step_strided_bases(p))),
    "as_strided of a base written in place earlier": (
        lambda p: True, lambda p: any(written for _, written in _step_strided_bases(p))),
}


# ---- what the generator could not write before (a block of its own) ----------------------------------------

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


# ---- the op forms of the list-of-tensors and strided-copy issue ----------------------------------------------

def _any_op(*names):
    return lambda p: any(o.op in names for o in p.ops)


def _gapped_unfold_written(p) -> bool:
    """An in-place op writes an unfold whose step is at least its size (or a view of one)."""
    by_out = {o.out: o for o in p.ops}

    def gapped(name) -> bool:
        while name in by_out:
            o = by_out[name]
            if o.op == "unfold":
                return o.params["step"] >= o.params["size"]
            if OPS[o.op].family != "view":
                return False
            name = o.args[0]
        return False
    return any(OPS[o.op].mutates and gapped(o.args[0]) for o in p.ops)


_DTYPED = ("cumsum", "cumprod", "sum", "prod", "mean", "softmax", "log_softmax")

REACH.update({
    "an in-place write into an unfold with gaps (step >= size)": (lambda p: True, _gapped_unfold_written),
    "a _foreach_ op out of place": (lambda p: True, _any_op("foreach", "foreach_pair")),
    "a _foreach_ op in place": (lambda p: True, _any_op("foreach_", "foreach_pair_")),
    "index_fill or index_fill_": (lambda p: True, _any_op("index_fill", "index_fill_")),
    "lerp (a scalar or a tensor weight)": (lambda p: True, _any_op("lerp", "lerp_w")),
    "a 0-d tensor built in the program fed to a scan or a reduction": (lambda p: True, _any_op("built_scan")),
    "a scan, reduction or softmax given dtype=": (
        lambda p: True, lambda p: any(o.op in _DTYPED and "dtype" in o.params for o in p.ops)),
    "bool arithmetic with a number (a bool tensor plus or times 2.0, 2, True)": (
        lambda p: True, _any_op("bool_scalar")),
    # error parity: a program that breaks an op's contract on purpose, so that compiled must raise as eager does
    "an op eager refuses on purpose (eager_rejects: bool minus bool, softmax of an int, ...)": (
        lambda p: True, _any_op("eager_rejects")),
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


def count_rows(table: dict, progs: list) -> dict:
    """name -> {"applies": programs it applies to, "has": those of them that have it}."""
    rows = {}
    for name, (applies, has) in table.items():
        where = [p for p in progs if applies(p)]
        rows[name] = {"applies": len(where), "has": sum(1 for p in where if has(p))}
    return rows


def _print_rows(rows: dict, total: int) -> None:
    for name, r in rows.items():
        share = f"{100 * r['has'] / r['applies']:.2f}%" if r["applies"] else "-"
        print(f"  {name}: {r['has']} of {r['applies']} cases where it applies ({share}); {r['has']} of {total} in all")


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
    rows = count_rows(REACH, progs)
    # step programs, drawn as `shapefuzz run --backend xla` draws them (no torch_xla needed to draw)
    steps = list(generate(campaign_strategy(CampaignConfig(backend="xla", seed=args.seed)), seed_=args.seed,
                          count=args.count))
    step_rows = count_rows(STEP_REACH, steps) if steps else {}
    cov = pair_report(progs, cfg, args.cache) if args.pairs else None
    if args.json:
        import json

        print(json.dumps({"programs": len(progs), "backend": args.backend, "device": args.device, "seed": args.seed,
                          "swarm": args.swarm, "pair_aimed": args.pair_aimed, "rows": rows,
                          "step_programs": len(steps), "step_rows": step_rows,
                          **({"pairs": cov} if cov else {})}, indent=1))
        return
    print(f"{len(progs)} programs: backend {args.backend}, device {args.device}, seed {args.seed}"
          + (", swarm" if args.swarm else "") + (", pair-aimed" if args.pair_aimed else ""))
    _print_rows(rows, len(progs))
    if steps:
        print(f"{len(steps)} torch_xla step programs (seed {args.seed})")
        _print_rows(step_rows, len(steps))
    if cov:
        print_pairs(cov)


if __name__ == "__main__":
    main()
