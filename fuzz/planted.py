"""Deliberately wrong torch.compile backends, to test that the oracle and the
campaign catch real classes of compiler bugs. Use them as `--backend
fuzz.planted:NAME`. Each wraps the FX graph and runs it eagerly, then breaks
one thing under a stated condition; `passthrough` breaks nothing, `one_ulp`
only rounds, `float64_inside` is more precise than eager (fuzz/planted_thresholds.py,
with two that are wrong at a threshold).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fuzz.planted_thresholds import drops_selected, float64_inside, moves_subtraction  # noqa: F401 - by name
from fuzz.planted_contract import accepts_what_eager_rejects, returns_input_as_output, wrong_every_other, wrong_two_ways  # noqa: F401,E501
from fuzz.planted_ops import (wrong_on_foreach, wrong_on_gapped_unfold_write, wrong_on_index_fill,  # noqa: F401
                               wrong_on_lerp, wrong_on_reduction_dtype, wrong_on_scalar_tensor_scan)
from fuzz.planted_gradients import _wrong_backward, wrong_gradients  # noqa: F401 - by name

THRESHOLD = 8  # "a dynamic dim exceeds some size"
STORAGE_MESSAGE = ("setStorage: sizes [2304], strides [1], storage offset 0, and itemsize 4 requiring a "
                   "storage size of 9216 are out of bounds for storage of size 8704")


def _tensors(args):
    return [a for a in args if isinstance(a, torch.Tensor)]


def _corrupt_first(out):
    """Add 1 to element 0 of the first non-empty output tensor."""
    out = list(out)
    for i, t in enumerate(out):
        if isinstance(t, torch.Tensor) and t.numel() > 0:
            t = t.clone()  # keeps the strides, so index rather than view(-1)
            first = (0,) * t.dim()
            t[first] = ~t[first] if t.dtype == torch.bool else t[first] + 1
            out[i] = t
            break
    return tuple(out)


def _has_pad(gm) -> bool:
    pads = {F.pad, torch._C._nn.pad, torch.ops.aten.constant_pad_nd.default, torch.ops.aten.pad.default}
    return any(n.op == "call_function" and n.target in pads for n in gm.graph.nodes)


def passthrough(gm, example_inputs):
    """Correct: runs the graph as is."""
    return gm.forward


def _one_ulp(t, inputs):
    """t with its inexact values one ulp off, up and down by turns along its storage (a compiler's rounding
    has no bias to one side), in t's exact layout (strides, offset, overlap): the whole storage moves, so a
    view stays the view it was. What a correct compiler returns exactly stays: a view of an input (its very
    memory), zeros, integers, infinities and NaN."""
    if not (isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()):
        return t
    if any(t.untyped_storage().data_ptr() == _storage(x) for x in inputs if x.numel()):
        return t
    flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.detach().untyped_storage())
    up = torch.arange(flat.numel(), device=t.device) % 2 == 0
    moved = torch.nextafter(flat, torch.where(up, float("inf"), float("-inf")).to(t.dtype))
    moved = torch.where(torch.isfinite(flat) & (flat != flat.round()), moved, flat)
    moved = moved.as_strided(t.shape, t.stride(), t.storage_offset())
    if not t.requires_grad:
        return moved
    return t + torch.where(moved == t, 0.0, moved - t).detach()  # the gradient still flows through t; inf - inf is nan


def one_ulp(gm, example_inputs):
    """Correct up to rounding: every inexact floating output comes back one ulp off (as a compiler that
    rounds differently may), layout kept. The oracle must flag nothing of it: rounding is no bug."""
    def run(*args):
        out, inputs = gm(*args), _tensors(args)
        if isinstance(out, (tuple, list)):
            return type(out)(_one_ulp(t, inputs) for t in out)
        return _one_ulp(out, inputs)
    return run


def corrupt_large(gm, example_inputs):
    """Wrong output element when any input dim exceeds THRESHOLD."""
    def run(*args):
        out = gm(*args)
        if any(n > THRESHOLD for t in _tensors(args) for n in t.shape):
            return _corrupt_first(out)
        return out
    return run


def storage_error_on_pad(gm, example_inputs):
    """Raises the seed's setStorage error at run time for graphs that pad."""
    if not _has_pad(gm):
        return gm.forward

    def run(*args):
        raise RuntimeError(STORAGE_MESSAGE)
    return run


def mutate_input(gm, example_inputs):
    """Writes into its first floating input tensor, which it must not do."""
    def run(*args):
        out = gm(*args)
        for t in _tensors(args):
            if t.is_floating_point() and t.numel() > 0:
                with torch.no_grad():
                    t[(0,) * t.dim()] += 1
                break
        return out
    return run


def wrong_on_odd_reflect(gm, example_inputs):
    """Wrong output when the graph has a reflect pad and an input dim is odd
    and > 1 (a known minimal form for shrinking tests)."""
    reflect = any(n.op == "call_function" and n.target in (F.pad, torch._C._nn.pad)
                  and (n.kwargs.get("mode") == "reflect" or "reflect" in n.args[2:3]) for n in gm.graph.nodes)
    if not reflect:
        return gm.forward

    def run(*args):
        out = gm(*args)
        if any(n > 1 and n % 2 for t in _tensors(args) for n in t.shape):
            return _corrupt_first(out)
        return out
    return run


def _calls(gm):
    """(name, node) of the graph's call_function / call_method nodes: a method by its
    name, a function by its __name__ (torch.mm -> "mm", Tensor.nonzero -> "nonzero")."""
    for n in gm.graph.nodes:
        if n.op == "call_method":
            yield str(n.target), n
        elif n.op == "call_function":
            yield getattr(n.target, "__name__", str(n.target)).split(".")[0], n


def _targets(gm) -> set:
    """The names of the graph's callables (_calls)."""
    return {name for name, _ in _calls(gm)}


_MATRIX = {"mm", "bmm", "matmul", "addmm", "baddbmm", "linear"}
_DATA = {"nonzero", "masked_select", "unique", "_unique2", "bincount", "item", "tolist", "_local_scalar_dense"}


def _when_graph_has(names: set | None, *, also=lambda gm: True):
    """A backend that corrupts an output of graphs calling any of `names` (None: any graph) where `also` holds."""
    def backend(gm, example_inputs):
        if not ((names is None or _targets(gm) & names) and also(gm)):
            return gm.forward

        def run(*args):
            return _corrupt_first(gm(*args))
        return run
    return backend


wrong_after_matmul = _when_graph_has(_MATRIX)
wrong_after_matmul.__doc__ = "Wrong output element for graphs with a matrix product (mm, bmm, matmul, linear, ...)."


wrong_with_data_dependent = _when_graph_has(_DATA)
wrong_with_data_dependent.__doc__ = ("Wrong output element for graphs that keep a data-dependent op (nonzero, "
                                     "masked_select, unique, bincount, item/tolist) in the graph: only reachable "
                                     "with Dynamo's capture_dynamic_output_shape_ops / capture_scalar_outputs.")


def _example(arg):
    """What Dynamo recorded for a graph node's argument (a fake tensor), else None."""
    return getattr(arg, "meta", {}).get("example_value")


def _resizes_by_size_or_in_5d(gm) -> bool:
    """An interpolate to a given size, or of a 5-d tensor."""
    for n in gm.graph.nodes:
        if n.op != "call_function" or getattr(n.target, "__name__", "") != "interpolate":
            continue
        value = _example(n.args[0] if n.args else n.kwargs.get("input"))
        sized = n.kwargs.get("size") is not None or (len(n.args) > 1 and n.args[1] is not None)
        if sized or (value is not None and value.dim() == 5):
            return True
    return False


wrong_on_sized_or_5d_interpolate = _when_graph_has({"interpolate"}, also=_resizes_by_size_or_in_5d)
wrong_on_sized_or_5d_interpolate.__doc__ = ("Wrong output element for graphs that interpolate to a literal size= "
                                            "or interpolate a 5-d tensor (programs the generator could not "
                                            "write before these were drawn).")


_BOOL_PROMOTING = {"ldexp", "copysign", "floor_divide", "remainder", "fmod", "where", "masked_fill"}


def _is_bool(arg) -> bool:
    value = _example(arg)
    return isinstance(value, torch.Tensor) and value.dtype == torch.bool


def _bool_operand_promoted(gm) -> bool:
    """An op that promotes a bool operand (ldexp and friends, a rounding div) given one:
    where's condition and masked_fill's mask are bool by nature, and do not count."""
    for name, n in _calls(gm):
        if name == "div" and n.kwargs.get("rounding_mode") is None:
            continue
        if name not in _BOOL_PROMOTING | {"div"}:
            continue
        values = {"where": n.args[1:], "masked_fill": n.args[:1]}.get(name, n.args)
        if any(_is_bool(a) for a in values):
            return True
    return False


wrong_on_bool_operand = _when_graph_has(_BOOL_PROMOTING | {"div"}, also=_bool_operand_promoted)
wrong_on_bool_operand.__doc__ = ("Wrong output element for graphs where ldexp, copysign, a rounding division, where "
                                 "or masked_fill promotes a bool operand (programs the generator could not write "
                                 "before bool operands were drawn there).")


def _integer_product(gm) -> bool:
    """A matrix product of integer operands (eager multiplies integers on CPU only)."""
    for n in gm.graph.nodes:
        if n.op == "call_function" and getattr(n.target, "__name__", "") in _MATRIX:
            values = [_example(a) for a in n.args]
            if any(isinstance(v, torch.Tensor) and not v.is_floating_point() and v.dtype != torch.bool
                   for v in values):
                return True
    return False


wrong_on_int_matmul = _when_graph_has(_MATRIX, also=_integer_product)
wrong_on_int_matmul.__doc__ = ("Wrong output element for graphs with an integer mm, bmm or matmul (programs the "
                               "generator could not write before integer matrix products were drawn).")


def _resizing_dtype_view(gm) -> bool:
    """A view(dtype) whose element size differs from its input's (the last dim grows or shrinks)."""
    for name, n in _calls(gm):
        if name == "view" and len(n.args) == 2 and isinstance(n.args[1], torch.dtype):
            value = _example(n.args[0])
            if isinstance(value, torch.Tensor) and value.element_size() != n.args[1].itemsize:
                return True
    return False


wrong_on_resizing_view = _when_graph_has({"view"}, also=_resizing_dtype_view)
wrong_on_resizing_view.__doc__ = ("Wrong output element for graphs with a view(dtype) that changes the element size "
                                  "(programs the generator could not write before such views were drawn).")


def _literal_shape(gm) -> bool:
    """A reshape or view to (-1, k), k a literal >= 2; or a squeeze that keeps the rank (its dim is a size that
    is not 1 at run time). A gather's index view (-1, 1) and a squeeze of a size-1 dim do not count."""
    for name, n in _calls(gm):
        if name in ("reshape", "view") and len(n.args) == 3 and n.args[1] == -1 \
                and isinstance(n.args[2], int) and n.args[2] >= 2:
            return True
        if name == "squeeze":
            before, after = _example(n.args[0]), n.meta.get("example_value")
            if isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor) and before.dim() == after.dim():
                return True
    return False


wrong_on_literal_shape = _when_graph_has({"reshape", "view", "squeeze"}, also=_literal_shape)
wrong_on_literal_shape.__doc__ = ("Wrong output element for graphs that reshape or view to a literal (-1, k), or "
                                  "squeeze a dim that is not 1 at run time (programs the generator could not write "
                                  "before literal shapes were drawn).")


def _made_as(size):
    """A size's expression as the op that made it gave it (an int as itself): a broadcast's deferred check
    (u0 == s4) later replaces u0 by s4 in `expr`, not in `_expr`."""
    node = getattr(size, "node", None)
    return size if node is None else getattr(node, "_expr", node.expr)


def _raw(size) -> str:
    return str(_made_as(size))


def _unbacked(size) -> bool:
    """A size the compiler holds as an unbacked symbol (u0, ...): read from the data."""
    return isinstance(size, torch.SymInt) and any(str(x).startswith("u") for x in _made_as(size).free_symbols)


# Pointwise ops of two or more tensors, as Dynamo's graph names them ("+" is operator.add, "add").
_BROADCASTING = {"add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "maximum", "minimum", "atan2", "eq",
                 "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "bitwise_xor", "xor", "and_", "or_",
                 "where", "floor_divide", "remainder", "fmod", "copysign", "ldexp", "lshift", "rshift", "masked_fill",
                 "clamp", "add_", "sub_", "mul_", "div_", "copy_", "iadd", "imul"}


def _unbacked_broadcast(gm) -> bool:
    """A pointwise op of two or more tensors where an unbacked size meets, aligned from the last dim, a size
    that is not the same expression, nor a literal 1 (which broadcasts against any size: the generator could
    always write that)."""
    for name, n in _calls(gm):
        if name not in _BROADCASTING:
            continue
        # keywords too: clamp(x, min=t, max=t) passes its tensors so
        shapes = [v.shape for v in map(_example, list(n.args) + list(n.kwargs.values()))
                  if isinstance(v, torch.Tensor) and v.dim() >= 1]
        for a, b in ((a, b) for i, a in enumerate(shapes) for b in shapes[i + 1:]):
            for x, y in zip(reversed(a), reversed(b)):
                if (_unbacked(x) or _unbacked(y)) and _raw(x) != _raw(y) and "1" not in (_raw(x), _raw(y)):
                    return True
    return False


wrong_on_unbacked_broadcast = _when_graph_has(None, also=_unbacked_broadcast)
wrong_on_unbacked_broadcast.__doc__ = ("Wrong output element for graphs where a data-dependent (unbacked) size "
                                       "broadcasts against another size (programs the generator could not write "
                                       "before); with capture_dynamic_output_shape_ops, or fullgraph=True.")


_SCALAR_READS = {"item", "tolist", "_local_scalar_dense"}
# The ops that could not take such a value before: a clamp bound, a full or fill_ value, a pad width. A narrow
# length and an arange end read this way (item_narrow, item_arange) were drawn before, and do not count.
_SCALAR_TAKERS = {"clamp", "clamp_min", "clamp_max", "full", "fill_", "pad", "constant_pad_nd"}


def _item_argument(gm) -> bool:
    """A clamp, full, fill_ or pad given, as an argument, a scalar read from the data (item(), tolist()), or
    one computed from such a scalar."""
    from torch.fx.node import map_arg

    scalars = set()
    for name, n in _calls(gm):
        used = []
        map_arg((n.args, n.kwargs), lambda a: used.append(a))
        if not (name in _SCALAR_READS or any(a in scalars for a in used)):
            continue
        if name in _SCALAR_TAKERS:
            return True
        if not isinstance(n.meta.get("example_value"), torch.Tensor):
            scalars.add(n)  # a scalar computed from the read (int(), % 3, a getitem of tolist's list)
    return False


wrong_on_item_argument = _when_graph_has(None, also=_item_argument)
wrong_on_item_argument.__doc__ = ("Wrong output element for graphs where a value read with item() or tolist() is a "
                                  "clamp bound, a full or fill_ value, or a pad width (programs the generator "
                                  "could not write before); with capture_scalar_outputs, or fullgraph=True.")


def _as_strided_of_computed(gm) -> bool:
    """An as_strided of a value the graph computed (a contiguous() copy, an op's result), not of an input:
    the generator drew as_strided on program inputs only before."""
    for name, n in _calls(gm):
        if name == "as_strided" and n.args and getattr(n.args[0], "op", "placeholder") != "placeholder":
            return True
    return False


wrong_on_computed_as_strided = _when_graph_has({"as_strided"}, also=_as_strided_of_computed)
wrong_on_computed_as_strided.__doc__ = ("Wrong output element for graphs with an as_strided of a computed value "
                                        "(the generator could not write it before: as_strided took inputs only).")


_CUMULATIVE = {"cumsum", "cumprod"}


def _unbacked_input(gm) -> bool:
    """A graph input with a dim marked unbacked (mark_unbacked: an unbacked symbol from the start)."""
    for n in gm.graph.nodes:
        value = n.meta.get("example_value") if n.op == "placeholder" else None
        if isinstance(value, torch.Tensor) and any(_unbacked(size) for size in value.shape):
            return True
    return False


def wrong_on_rare_triple(gm, example_inputs):
    """Wrong output element where three features meet, each common alone: a dim marked unbacked, an input
    that is not contiguous at run time, and a cumsum or cumprod in the graph (a bug whose trigger
    is a conjunction of three features; a default campaign first showed it at case 44 of seed 0, 80 of seed 2,
    329 of seed 3, 930 of seed 4)."""
    if not (_targets(gm) & _CUMULATIVE and _unbacked_input(gm)):
        return gm.forward

    def run(*args):
        out = gm(*args)
        if any(not t.is_contiguous() for t in _tensors(args)):
            return _corrupt_first(out)
        return out
    return run


# ---- programs the generator could not write before: unbacked sizes and item() values where they were refused -

def _unchecked(gm, failed: list):
    """gm with its runtime asserts (aten._assert_scalar: Dynamo's deferred checks of unbacked sizes) noting a
    failure in `failed` rather than raising: a compiler that does not check what it assumed."""
    def note(cond, message):
        if not cond:
            failed.append(message)

    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is torch.ops.aten._assert_scalar.default:
            n.target = note
    gm.recompile()
    return gm


def wrong_on_unbacked_one_broadcast(gm, example_inputs):
    """Wrong output element, rather than the runtime assert, where a data-dependent (unbacked) size that is 1
    at run time broadcasts against a larger size: the compiler assumes it does not broadcast (by design) and
    asserts that; this one skips the assert and gets the broadcast wrong (the generator could not write an
    unbacked 1 against a larger size before). With capture_dynamic_output_shape_ops, or fullgraph=True."""
    if not _unbacked_broadcast(gm):
        return gm.forward
    failed: list = []
    gm = _unchecked(gm, failed)

    def run(*args):
        failed.clear()
        out = gm(*args)
        return _corrupt_first(out) if failed else out
    return run


def _unbacked_literal_shape(gm) -> bool:
    """A squeeze, or a reshape or view to literal sizes, of a tensor with a size the compiler holds as unbacked
    (data-dependent, or a dim marked unbacked)."""
    for name, n in _calls(gm):
        literal = name in ("reshape", "view") and len(n.args) >= 2 and all(
            type(a) is int for a in n.args[1:])
        if name == "squeeze" or literal:
            value = _example(n.args[0])
            if isinstance(value, torch.Tensor) and any(_unbacked(size) for size in value.shape):
                return True
    return False


wrong_on_unbacked_literal_shape = _when_graph_has({"squeeze", "reshape", "view"}, also=_unbacked_literal_shape)
wrong_on_unbacked_literal_shape.__doc__ = ("Wrong output element for graphs that squeeze, or reshape or view to a "
                                           "literal shape, a tensor with an unbacked size (the generator could not "
                                           "write it before); with capture_dynamic_output_shape_ops, "
                                           "fullgraph=True or mark_unbacked.")


def _float_bits_kept(gm) -> bool:
    """A view(dtype) of a float tensor to an integer dtype that no later view reads back as a float."""
    for name, n in _calls(gm):
        if name == "view" and len(n.args) == 2 and isinstance(n.args[1], torch.dtype) \
                and not n.args[1].is_floating_point:
            value = _example(n.args[0])
            back = any(u.op == "call_method" and u.target == "view" and len(u.args) == 2
                       and isinstance(u.args[1], torch.dtype) and u.args[1].is_floating_point for u in n.users)
            if isinstance(value, torch.Tensor) and value.is_floating_point() and not back:
                return True
    return False


wrong_on_float_bits_kept = _when_graph_has({"view"}, also=_float_bits_kept)
wrong_on_float_bits_kept.__doc__ = ("Wrong output element for graphs that view a float tensor as an integer dtype "
                                    "and keep it so (the generator used to read float bits as integers only to "
                                    "view them back).")


def _placeholders(node) -> set:
    """The graph inputs a node is computed from."""
    seen, todo, out = set(), [node], set()
    while todo:
        n = todo.pop()
        if n in seen or not hasattr(n, "all_input_nodes"):
            continue
        seen.add(n)
        if n.op == "placeholder":
            out.add(n)
        todo.extend(n.all_input_nodes)
    return out


def _item_of_another(gm) -> bool:
    """A clamp, full or fill_ given a scalar read (item(), tolist()) from tensors other than those it takes."""
    from torch.fx.node import map_arg

    reads = {}  # scalar node -> the graph inputs of the tensor it was read from
    for name, n in _calls(gm):
        used = []
        map_arg((n.args, n.kwargs), lambda a: used.append(a))
        if name in _SCALAR_READS:
            reads[n] = _placeholders(n.args[0]) if n.args else set()
            continue
        sources = set().union(*(reads[a] for a in used if a in reads)) if any(a in reads for a in used) else None
        if sources is None:
            continue
        if name in _SCALAR_TAKERS:
            tensors = [a for a in used if a not in reads and isinstance(_example(a), torch.Tensor)]
            taken = set().union(*(_placeholders(a) for a in tensors)) if tensors else set()
            if sources - taken:
                return True
        elif not isinstance(n.meta.get("example_value"), torch.Tensor):
            reads[n] = sources  # a scalar computed from the read
    return False


def wrong_gradients_on_item_of_another(gm, example_inputs):
    """Right forward, wrong backward for graphs that clamp (or fill) by a scalar read with item()/tolist() from
    another tensor (such values as op arguments in backward programs, read from another tensor than the one
    they fill, could not be written before): the first non-empty floating gradient comes back with 1 added to
    its first element (a clamp's gradient is often 0, which a scale would leave right). With
    capture_scalar_outputs, or fullgraph=True."""
    if not _item_of_another(gm):
        return gm.forward
    return _wrong_backward(gm, example_inputs, lambda g: _corrupt_first((g,))[0])


def wrong_strides(gm, example_inputs):
    """Right values, wrong layout: an output whose last two dims are both
    longer than 1 comes back with them swapped in memory."""
    def run(*args):
        out = list(gm(*args))
        for i, t in enumerate(out):
            if isinstance(t, torch.Tensor) and t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1:
                out[i] = t.transpose(-1, -2).contiguous().transpose(-1, -2)
                break
        return tuple(out)
    return run


def _storage(t):
    return t.untyped_storage().data_ptr()


def breaks_on_alias(gm, example_inputs):
    """Wrong output element when two inputs share storage (inputs that alias
    each other, which Dynamo must treat as such)."""
    def run(*args):
        out = gm(*args)
        ts = [t for t in _tensors(args) if t.numel() > 0]
        if len({_storage(t) for t in ts}) < len(ts):
            return _corrupt_first(out)
        return out
    return run


_NARROW = {torch.uint8: (0, 255), torch.int8: (-128, 127), torch.int16: (-32768, 32767)}


def widens_narrow_ints(gm, example_inputs):
    """Narrow integers computed wide and saturated back: right until a value
    wraps around (uint8 250 + 10 gives 255, not 4)."""
    def run(*args):
        out = gm(*args)
        if not any(isinstance(t, torch.Tensor) and t.dtype in _NARROW for t in args):
            return out
        wide = [t.long() if isinstance(t, torch.Tensor) and t.dtype in _NARROW else t for t in args]
        try:
            again = gm(*wide)
        except Exception:  # noqa: BLE001 - an op that needs the narrow dtype: keep the right answer
            return out
        fixed = []
        for o, w in zip(out, again):
            if (isinstance(o, torch.Tensor) and o.dtype in _NARROW and isinstance(w, torch.Tensor)
                    and w.shape == o.shape and not w.is_floating_point()):
                lo, hi = _NARROW[o.dtype]
                o = w.clamp(lo, hi).to(o.dtype)
            fixed.append(o)
        return tuple(fixed)
    return run


PLANTED = ("corrupt_large", "storage_error_on_pad", "mutate_input", "wrong_on_odd_reflect", "wrong_after_matmul",
           "wrong_with_data_dependent", "wrong_strides", "breaks_on_alias", "widens_narrow_ints", "wrong_gradients",
           "wrong_on_sized_or_5d_interpolate", "wrong_on_bool_operand",
           "wrong_on_int_matmul", "wrong_on_resizing_view", "wrong_on_literal_shape",
           "wrong_on_unbacked_broadcast", "wrong_on_item_argument", "wrong_on_computed_as_strided",
           "wrong_on_rare_triple", "wrong_on_unbacked_one_broadcast", "wrong_on_unbacked_literal_shape",
           "wrong_on_float_bits_kept", "wrong_gradients_on_item_of_another", "returns_input_as_output",
           "accepts_what_eager_rejects", "wrong_on_foreach", "wrong_on_index_fill", "wrong_on_lerp",
           "wrong_on_scalar_tensor_scan", "wrong_on_reduction_dtype", "wrong_on_gapped_unfold_write")
