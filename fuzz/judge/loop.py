"""The judging loop over a size schedule, shared by the in-process runner and
every repro.py.

This module imports only torch and the standard library: codegen copies its
source into each repro (after compare.py's), so the standalone script runs
exactly the loop shapefuzz judges with. The comparison rule comes in as an
argument for the same reason. `run_schedule` returns plain data; the runner
turns it into a Verdict, the repro prints `describe`'s lines.
"""

import re
import time

import torch

AGREE = "agree"  # every call agreed
BOTH_ERROR = "both-error"  # eager and compiled raised: the program is invalid
EAGER_ERROR = "eager-error"  # eager raised, compiled returned
COMPILED_ERROR = "compiled-error"  # compiled raised, eager returned
MISMATCH = "mismatch"  # outputs, or inputs after the call, differ
STRIDE = "stride"  # values agree, an output's strides differ (only with check_strides)
RECOMPILE = "recompile"  # a call that should reuse the compiled graph compiled another one
GRADIENT = "gradient"  # outputs agree, the gradients of a loss of them do not
ALIASING = "aliasing"  # values agree, an output shares storage with an input or output where eager's does not
ERROR_CLASS = "error-class"  # eager and compiled raised errors of different classes
# A call's outputs differed only through values a discontinuous op reads, which compiled computes no further
# from float64 than eager: rounding decides (result["rounded"]); the later calls are judged on.
ROUNDED = "rounded"
# A case stops calling once its schedule has compiled this many graphs: a compile
# was about 3.5 s of an H100 case (docs/benchmarks.md, 2026-11-25), and the calls
# past a third graph, mostly static recompiles at one more size, 14% of case time.
MAX_GRAPHS = 3
SKIP_EXIT = 77  # exit status of a repro whose device this machine lacks: skipped, neither passed nor failed


def missing_device(device):
    """Why this machine cannot run on `device` (a CUDA device it does not
    have), or None."""
    dev = torch.device(device)
    if dev.type != "cuda":
        return None
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n == 0:
        return f"it runs on {device}, and this machine has no CUDA device"
    if dev.index is not None and dev.index >= n:
        return f"it runs on {device}, and this machine has {n} CUDA device(s)"
    return None


def _strides(t):
    """Strides of dims longer than 1 (others are arbitrary); none for an empty
    tensor, whose strides address nothing."""
    if t.numel() == 0:
        return ()
    return tuple(s for s, n in zip(t.stride(), t.shape) if n > 1)


def _graphs():
    from torch._dynamo.utils import counters

    return counters["stats"]["unique_graphs"]


def _overlapping(t):
    """Whether t addresses some element twice (an expanded or as_strided layout).
    Only a view can be that; a compiled result computed from such an input is
    laid out densely, so its strides cannot match and are not judged."""
    dims = sorted((s, n) for s, n in zip(t.stride(), t.shape) if n > 1)
    extent = 0  # elements spanned by the dims of smaller stride
    for stride, n in dims:
        if stride <= extent:
            return True
        extent += stride * (n - 1)
    return False


def _guard_failures():
    """Every guard-failure reason Dynamo has recorded, in order."""
    from torch._dynamo.utils import guard_failures

    return [r for reasons in list(guard_failures.values()) for r in reasons]


_SIZE = re.compile(r"\b(size|stride)\(\)\[\d+\]")


# the graph an earlier call of size 0 or 1 got (specialised by design) does not fit this call
_ZERO_ONE = re.compile(r"size mismatch at index \d+\. expected [01], actual")


def _relational(guard):
    """An inequality over sizes or strides, chained or not: x.size()[1] <
    x.size()[2], 2 <= x.size()[0] <= 3. Not an equality (== 5, !=)."""
    return bool(_SIZE.search(guard)) and re.search(r"[<>]", guard) is not None \
        and not re.search(r"==|!=|mismatch", guard)


def relational_only(reasons):
    """True when every reason is an inequality over sizes or strides (x.size()[1] <
    x.size()[2], 2 <= x.size()[0] <= 3), or the miss of a graph specialised to a
    size 0 or 1: Dynamo may guard on how dynamic sizes relate to each other and
    to bounds, so a call on the other side of such a relation compiles anew by
    design. A size pinned to another value ("size mismatch ... expected 31",
    "== 5") is not."""
    guards = [str(r).split("#")[0].strip() for r in reasons]  # after "#": the source line that made it
    return bool(guards) and all(_relational(g) or _ZERO_ONE.search(g) for g in guards)


def _storage_key(t):
    """What identifies t's storage: its address, or on a device without one
    (torch_xla) the tensor itself."""
    try:
        return t.untyped_storage().data_ptr()
    except RuntimeError:
        return id(t)


def reuse_key(inputs, dynamic_dims):
    """Calls with equal keys must share one compiled graph: the sizes of every
    dim not marked dynamic and of the bases of inputs that are views, which
    marked dims are equal to which (Dynamo gives equal sizes one symbol), and
    which inputs alias which. None when a marked dim is 0 or 1 (Dynamo
    specialises those by design) or nothing is marked."""
    marked = [inputs[i].shape[d] for i, d in dynamic_dims]
    if not marked or min(marked) < 2:
        return None
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    static = tuple(tuple(n for d, n in enumerate(t.shape) if (i, d) not in dynamic_dims)
                   for i, t in enumerate(inputs) if isinstance(t, torch.Tensor))
    # an input that is a view: Dynamo guards on its base's sizes too, which no mark makes dynamic
    bases = tuple(tuple(t._base.shape) if t._base is not None else None for t in tensors)
    # Dynamo guards on which inputs are one tensor or share storage: a call that
    # aliases inputs another call did not is a new graph by design.
    storages = [_storage_key(t) for t in tensors]
    aliasing = tuple((next(j for j, u in enumerate(tensors) if u is t), storages.index(p))
                     for t, p in zip(tensors, storages))
    return static, bases, tuple(marked.index(n) for n in marked), aliasing


def alias_of(outputs, inputs):
    """For each output, what it shares storage with: ("input", j) for the first input on its storage,
    else ("output", k) for the first earlier output on it, else None (fresh, empty or not a tensor).
    Inputs and outputs by index, never by address: eager and compiled get inputs made apart."""
    def storage(t):
        if not isinstance(t, torch.Tensor) or t.numel() == 0:
            return None  # an empty tensor addresses nothing: whatever it shares is no contract
        try:
            return t.untyped_storage().data_ptr() or None
        except RuntimeError:  # a device without storage addresses (torch_xla)
            return None
    ins = [storage(t) for t in inputs]
    outs = [storage(t) for t in outputs]
    found = []
    for i, ptr in enumerate(outs):
        if ptr is None:
            found.append(None)
        elif ptr in ins:
            found.append(("input", ins.index(ptr)))
        else:
            found.append(("output", outs.index(ptr)) if outs.index(ptr) < i else None)
    return found


def _alias_mismatch(here, exempt):
    """(output index, compiled's alias_of, eager's) of the first output whose sharing differs, or None."""
    actual, expected = tuple(here["actual"]), tuple(here["expected"])
    got = alias_of(actual, here["compiled_inputs"])
    want = alias_of(expected, here["eager_inputs"])
    for i, (a, e) in enumerate(zip(got, want)):
        if a != e and i not in exempt:
            return i, a, e
    return None


def _alias_text(a):
    return "a fresh tensor" if a is None else f"{a[0]} {a[1]}'s storage"


def _innermost(e):
    """The innermost exception e wraps (inner_exception, cause, context): a compiler wraps the error it met."""
    seen = set()
    while id(e) not in seen:
        seen.add(id(e))
        inner = getattr(e, "inner_exception", None) or e.__cause__ or e.__context__
        if inner is None:
            break
        e = inner
    return e


def grads(outputs, inputs):
    """Gradients of sum(out**2)/2 over the floating outputs that require grad,
    for each input that is a leaf requiring grad (None for the others)."""
    outs = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad]
    leaves = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad and t.is_leaf]
    if not outs or not leaves:
        return [None] * len(inputs)
    loss = sum(((o if o.dtype == torch.float64 else o.float()) ** 2).sum() / 2 for o in outs)
    got = dict(zip(map(id, leaves), torch.autograd.grad(loss, leaves, allow_unused=True)))
    return [got.get(id(t)) for t in inputs]


def run_schedule(compiled, program, make_inputs, mark_inputs, calls, compare_outputs, device="cpu",
                 check_strides=True, dynamic_dims=(), backward=False, max_graphs=None, stride_exempt=(),
                 index_outputs=None, index_sources=None, indices_agree=None, rounding=None, alias_exempt=()):
    """Call `program` eagerly and `compiled` once per call of the schedule, up
    to the first call where they disagree or both raise. The float64 run of
    `program` is the reference only a disagreement needs: it is made then.

    dynamic_dims: (input index, dim) of the dims marked dynamic (mark_dynamic,
    mark_unbacked): a call whose reuse_key an earlier call had must compile no
    new graph (RECOMPILE). Empty: not checked.

    backward: once the outputs agree, the gradients (`grads`) are compared
    under the same rule; an error there has stage "backward".

    max_graphs: once the calls so far have compiled this many graphs, the
    later calls are not made. None: every call.

    stride_exempt: output indices whose strides are not judged (computed from
    a self-overlapping value: eager's dim order there is tie-breaking).

    index_outputs: {output index: (kind, dim, flag)} of outputs that are
    indices (compare.indices_agree), with index_sources(*inputs) -> {output
    index: the eager value it indexes}: such an output that mismatches passes
    when it picks the values eager's indices pick (ties may go either way).
    rounding: outputs that differ only where one ulp fell across a threshold pass (`_rounding_decided`).

    alias_exempt: output indices whose sharing of storage (`alias_of`, else ALIASING) is not judged.

    Returns a dict: status (a constant above); call (None when all agree);
    eager_error, compiled_error; bad_outputs, bad_inputs ([(index, kind,
    detail)] from compare_outputs); strides, aliasing ((index, compiled's, eager's));
    graphs ((before, after) that call, for RECOMPILE); that call's actual,
    expected, compiled_inputs, eager_inputs, for printing; compile_seconds
    (the first compiled call, compiling included); rounded, edge, edge_graphs
    (`_rounding_decided`'s answers and the graphs it compiled)."""
    result = dict(status=AGREE, call=None, eager_error=None, compiled_error=None, bad_outputs=[], bad_inputs=[],
                  bad_grads=[], stage="forward", strides=None, graphs=None, actual=None, expected=None,
                  compiled_inputs=None, eager_inputs=None, compile_seconds=0.0, edge_graphs=0)
    seen_keys = set()
    dynamic_dims = [tuple(x) for x in dynamic_dims]
    graphs_at_start = _graphs() if max_graphs else 0
    for call in range(calls):
        here, eager_error, compiled_error, seconds, before = _call_both(compiled, program, make_inputs, mark_inputs,
                                                                        call, device, bool(dynamic_dims))
        if call == 0:
            result["compile_seconds"] = seconds
        if backward and compiled_error is not None and eager_error is None:
            # AOTAutograd traces the backward with the forward: an op eager cannot
            # differentiate fails the compiled forward but only eager's backward.
            try:
                grads(here["expected"], here["eager_inputs"])
            except Exception as e:
                eager_error = e
        if eager_error is not None or compiled_error is not None:
            result.update(here, status=_error_status(eager_error, compiled_error), eager_error=eager_error,
                          compiled_error=compiled_error)
            return result
        bad_outputs, bad_inputs, decided, edge_graphs = _compare_call(here, program, make_inputs, mark_inputs,
                                                                      compare_outputs, index_outputs, index_sources,
                                                                      indices_agree, rounding)
        result["edge_graphs"] += edge_graphs  # graphs compiled to read edges are not the case's
        if decided is not None and decided[0] == ROUNDED:
            result.setdefault("rounded", decided[1])
            continue  # as agreeing: its shapes may differ, so not its strides nor its gradients
        if bad_outputs or bad_inputs:
            result.update(here, status=MISMATCH, bad_outputs=bad_outputs, bad_inputs=bad_inputs,
                          edge=decided[1] if decided else None)
            return result
        if _storage_differs(result, here, check_strides, stride_exempt, alias_exempt):
            return result
        if backward and _judge_grads(result, here, program, make_inputs, call, compare_outputs):
            return result
        if dynamic_dims:
            key = reuse_key(here["compiled_inputs"], dynamic_dims)
            if key is not None and key in seen_keys and _recompiled(result, here, before):
                return result
            seen_keys.add(key)
        if max_graphs and _graphs() - graphs_at_start - result["edge_graphs"] >= max_graphs:
            break
    return result


def _call_both(compiled, program, make_inputs, mark_inputs, call, device, watch_graphs):
    """One call of the schedule, eager then compiled. Returns (the call's
    values, as run_schedule's result names them; eager's error; compiled's
    error; seconds of the compiled call; (graphs, guard failures) just before
    it, when watch_graphs)."""
    # This order fixes what each call sees (one seeded generator per
    # make_inputs, the global RNG of random ops): keep it.
    eager_inputs = expected = eager_error = None
    try:
        eager_inputs = make_inputs(call)
        torch.manual_seed(call)  # random ops draw the same numbers eagerly and compiled (fallback_random)
        expected = program(*eager_inputs)
    except Exception as e:  # any eager error is data
        eager_error = e
    inputs = make_inputs(call)
    mark_inputs(*inputs)
    actual = compiled_error = None
    before = (_graphs(), len(_guard_failures())) if watch_graphs else (0, 0)
    t = time.perf_counter()
    try:
        torch.manual_seed(call)
        actual = compiled(*inputs)
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize()  # a kernel's asynchronous error surfaces as this call's
    except Exception as e:
        compiled_error = e
    seconds = time.perf_counter() - t
    here = dict(call=call, actual=actual, expected=expected, compiled_inputs=inputs, eager_inputs=eager_inputs)
    return here, eager_error, compiled_error, seconds, before


def _error_status(eager_error, compiled_error):
    """The status of a call where eager, compiled or both raised: both with errors of one class (the
    innermost of each) is an invalid program, of two classes a compiled error of its own."""
    if eager_error is not None and compiled_error is not None:
        same = type(_innermost(eager_error)) is type(_innermost(compiled_error))
        return BOTH_ERROR if same else ERROR_CLASS
    return EAGER_ERROR if eager_error is not None else COMPILED_ERROR


def _storage_differs(result, here, check_strides, stride_exempt, alias_exempt):
    """Whether an output of a call whose values agree shares storage unlike eager's (ALIASING) or, with
    check_strides, is laid out unlike it (STRIDE); then result is updated."""
    aliasing = _alias_mismatch(here, alias_exempt)
    if aliasing is not None:
        result.update(here, status=ALIASING, aliasing=aliasing)
        return True
    strides = _stride_mismatch(here["actual"], here["expected"], stride_exempt) if check_strides else None
    if strides is not None:
        result.update(here, status=STRIDE, strides=strides)
        return True
    return False


def _compare_call(here, program, make_inputs, mark_inputs, compare_outputs, index_outputs, index_sources,
                  indices_agree, rounding):
    """(bad outputs, bad inputs, what _rounding_decided said or None, graphs it compiled) of a call where both
    returned: against eager, and where that fails, with the float64 reference; index outputs that pick tied
    values excused."""
    call, actual, expected = here["call"], here["actual"], here["expected"]
    # Without a reference the rule is strictly stricter: what passes here passes with it.
    bad_outputs = compare_outputs(actual, expected, None)
    bad_inputs = compare_outputs(here["compiled_inputs"], here["eager_inputs"], None)
    if bad_outputs or bad_inputs:
        try:
            ref64_inputs = make_inputs(call, fp64=True)
            torch.manual_seed(call)
            ref64 = program(*ref64_inputs)
        except Exception:  # no reference: the plain tolerance decides
            ref64_inputs = ref64 = None
        bad_outputs = compare_outputs(actual, expected, ref64)
        bad_inputs = compare_outputs(here["compiled_inputs"], here["eager_inputs"], ref64_inputs)
    if index_outputs and any(i in index_outputs for i, _, _ in bad_outputs):
        try:
            torch.manual_seed(call)
            sources = index_sources(*make_inputs(call))
        except Exception:  # nothing to excuse ties with: the mismatch stands
            sources = {}
        bad_outputs = _untied(bad_outputs, index_outputs, sources, actual, expected, indices_agree)
    if not (bad_outputs and not bad_inputs and rounding):
        return bad_outputs, bad_inputs, None, 0
    graphs = _graphs()
    decided = _rounding_decided(here, make_inputs, mark_inputs, bad_outputs, compare_outputs, rounding)
    return bad_outputs, bad_inputs, decided, _graphs() - graphs


def _edge_values(rounding, make_inputs, mark_inputs, call):
    """(compiled, eager, float64) values of the edges at this call."""
    inputs = make_inputs(call)
    mark_inputs(*inputs)
    runs = []
    for fn, xs in ((rounding["compiled"], inputs), (rounding["values"], make_inputs(call)),
                   (rounding["values"], make_inputs(call, fp64=True))):
        torch.manual_seed(call)
        runs.append(list(fn(*xs)))
    return runs


def _rounding_decided(here, make_inputs, mark_inputs, bad_outputs, compare_outputs, rounding):
    """Whether the outputs that differ from eager's (bad_outputs) differ only through edges (computed
    floats a discontinuous op reads) whose compiled values are no further from float64 than eager's:
    (ROUNDED, {call, outputs, values}) when they are and the program run eagerly from the compiled edges
    gives what compiled gave; ("edge", (name, kind, detail)) naming the first edge compiled computes further
    off; None otherwise (no edge, edges equal, or the replay differs too: a bug after them).

    rounding: edges (their names), outputs ({output index: indices into edges it is computed from}),
    values(*inputs) -> the edges' values, compiled (values, compiled as the program is), replay(*inputs,
    edges) -> the program's outputs with those edges, agree(compiled, eager, float64) -> None or (kind,
    detail) (compare.value_agrees)."""
    call, outputs = here["call"], rounding["outputs"]
    if any(not outputs.get(i) for i, _, _ in bad_outputs):
        return None  # an output that no edge feeds differs: nothing to explain it by
    used = sorted({j for i, _, _ in bad_outputs for j in outputs[i]})
    try:
        compiled, eager, ref64 = _edge_values(rounding, make_inputs, mark_inputs, call)
    except Exception:  # no edge values to judge by: the mismatch stands
        return None
    moved = []
    for j in used:
        bad = rounding["agree"](compiled[j], eager[j], ref64[j])
        if bad is not None:
            return "edge", (rounding["edges"][j], bad[0], bad[1])
        if compiled[j].shape != eager[j].shape or not torch.equal(compiled[j], eager[j]):
            moved.append(rounding["edges"][j])
    if not moved:
        return None
    given = [compiled[j] if j in used else e for j, e in enumerate(eager)]
    given64 = [compiled[j].to(r.dtype) if j in used else r for j, r in enumerate(ref64)]
    try:
        torch.manual_seed(call)
        inputs = make_inputs(call)
        replayed = rounding["replay"](*inputs, given)
        bad = compare_outputs(here["actual"], replayed, None) + compare_outputs(here["compiled_inputs"], inputs, None)
        if bad:
            torch.manual_seed(call)
            inputs64 = make_inputs(call, fp64=True)
            replayed64 = rounding["replay"](*inputs64, given64)
            bad = compare_outputs(here["actual"], replayed, replayed64) \
                + compare_outputs(here["compiled_inputs"], inputs, inputs64)
    except Exception:  # the replay raised: the mismatch stands
        return None
    if bad:
        return None
    return ROUNDED, {"call": call, "outputs": [i for i, _, _ in bad_outputs], "values": moved}


def _stride_mismatch(actual, expected, stride_exempt):
    """(output index, compiled strides, eager strides) of the first output whose strides differ, or None."""
    for i, (a, e) in enumerate(zip(actual, expected)):
        if isinstance(a, torch.Tensor) and i not in stride_exempt and not _overlapping(e) \
                and _strides(a) != _strides(e):
            return i, a.stride(), e.stride()
    return None


def _recompiled(result, here, before):
    """Whether this call, whose reuse_key an earlier call had, compiled a new graph for
    a reason not by design (relational_only); then result is updated (RECOMPILE)."""
    graphs_before, reasons_before = before
    graphs_after = _graphs()
    if graphs_after <= graphs_before:
        return False
    reasons = _guard_failures()[reasons_before:]  # read only when a graph was added
    if relational_only(reasons):
        return False
    result.update(here, status=RECOMPILE, graphs=(graphs_before, graphs_after), guards=reasons)
    return True


def _untied(bad_outputs, index_outputs, sources, actual, expected, indices_agree):
    """bad_outputs less the index outputs whose values mismatch only by which of tied values they pick."""
    from_ties = {i for i, kind, _ in bad_outputs if kind == "values" and i in index_outputs and i in sources
                 and indices_agree(index_outputs[i][0], sources[i], index_outputs[i][1], index_outputs[i][2],
                                   actual[i], expected[i])}
    return [bad for bad in bad_outputs if bad[0] not in from_ties]


def _judge_grads(result, here, program, make_inputs, call, compare_outputs):
    """Compare the gradients of this call; True (result updated) when they disagree or raise."""
    eager_error = compiled_error = None
    try:
        expected = grads(here["expected"], here["eager_inputs"])
    except Exception as e:  # any eager error is data
        eager_error = e
    try:
        actual = grads(here["actual"], here["compiled_inputs"])
    except Exception as e:
        compiled_error = e
    if eager_error is not None or compiled_error is not None:
        result.update(here, status=_error_status(eager_error, compiled_error), eager_error=eager_error,
                      compiled_error=compiled_error, stage="backward")
        return True
    bad = compare_outputs(actual, expected, None)
    if bad:
        try:
            ref_inputs = make_inputs(call, fp64=True)
            ref = grads(program(*ref_inputs), ref_inputs)
        except Exception:  # no reference: the plain tolerance decides
            ref = None
        bad = compare_outputs(actual, expected, ref)
    if bad:
        result.update(here, status=GRADIENT, bad_grads=bad, stage="backward", actual_grads=actual,
                      expected_grads=expected)
        return True
    return False


def describe(result, schedule):
    """(lines to print, failed) for a run_schedule result; `schedule` lists
    each call's sizes. failed: compiled and eager disagree."""
    at = f"call {result['call']} {schedule[result['call']] if result['call'] is not None else ''}"
    status, lines = result["status"], []
    if status == BOTH_ERROR:
        lines.append(f"{at}: eager and compiled both raise; not a compiler bug")
    elif status == ERROR_CLASS:
        e, want = _innermost(result["compiled_error"]), _innermost(result["eager_error"])
        lines.append(f"{at}: compiled raised {type(e).__name__}: {e}; eager raised {type(want).__name__}: {want}")
    elif status == ALIASING:
        i, got, want = result["aliasing"]
        lines.append(f"{at}: output {i} is {_alias_text(got)} compiled, {_alias_text(want)} eager")
    elif status == COMPILED_ERROR:
        e = result["compiled_error"]
        lines.append(f"{at}: compiled raised {type(e).__name__}: {e}"
                     + (" (in the backward pass)" if result.get("stage") == "backward" else ""))
    elif status == EAGER_ERROR:
        e = result["eager_error"]
        lines.append(f"{at}: eager raised {type(e).__name__}: {e}; compiled returned")
    elif status == STRIDE:
        i, got, want = result["strides"]
        lines.append(f"{at}: output {i}: strides {got} vs eager {want}")
    elif status == GRADIENT:
        for i, kind, detail in result["bad_grads"]:
            lines.append(f"{at}: gradient of input {i}: {kind} mismatch {detail}")
    elif status == RECOMPILE:
        before, after = result["graphs"]
        lines.append(f"{at}: compiled {after - before} new graph(s) although an earlier call had the same static "
                     "sizes and its marked-dynamic dims were all >= 2")
        lines += [f"  failed guard: {r}" for r in result.get("guards") or []]
    problems = [("output", *bad) for bad in result["bad_outputs"]] + [("input", *bad) for bad in result["bad_inputs"]]
    for where, i, kind, detail in problems:
        lines.append(f"{at}: {where} {i}: {kind} mismatch {detail}")
        if kind in ("values", "nonfinite"):
            got = (result["actual"] if where == "output" else result["compiled_inputs"])[i]
            want = (result["expected"] if where == "output" else result["eager_inputs"])[i]
            lines.append(f"  compiled: {got.flatten()[:8].tolist()}")
            lines.append(f"  eager:    {want.flatten()[:8].tolist()}")
    if result.get("edge"):
        name, kind, detail = result["edge"]
        lines.append(f"  it comes through {name}, which compiled computes further from a float64 run than eager: "
                     f"{kind} {detail}")
    rounded = result.get("rounded")
    if rounded and status == AGREE:
        lines.append(f"call {rounded['call']} {schedule[rounded['call']]}: outputs {rounded['outputs']} differ from "
                     f"eager's only through {', '.join(rounded['values'])}, which compiled computes no further from a "
                     "float64 run than eager, at a threshold: rounding decides, not a bug")
    return lines, status not in (AGREE, BOTH_ERROR)
