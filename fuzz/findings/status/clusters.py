"""One cause, one row: corpus entries grouped by what triggers them and what they show.

Minimal keys split one cause that was found on two devices, under two markings, or with a pointwise op
the shrink could not take away. The bug list wants the cause: entries whose minimal programs share

    symptom   the outcome class; for an exception that names the bug, its type and masked headline;
              for a stride finding, how the strides differ
    trigger   the ops that are not plain arithmetic (pads, views, reductions, matrix ops, ..., with
              their name/flag params: pad(mode=reflect)), the input dtype classes and layouts, and
              whether gradients are judged

form one cluster. Device, dim markings, compile mode and Inductor flags are left out: they are where a
cause was seen, not what it is. The representative is the entry a maintainer should get: a CPU one where
there is one (anyone can run it), then the smallest program. The rest are its variants.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Arithmetic a shrink keeps when a value must exist, and the neutral op it puts in place of others:
# they say nothing of the cause unless nothing else is left.
_PLAIN = ("pointwise", "binary")
# Layouts whose dims sit in memory in another order than their index order: for a stride finding (the
# output's dim order differs from eager's) which reordering the input had is where it was seen, not the
# cause (index_copy_ gave one mismatch on a transposed and on a channels_last input).
_REORDERED = frozenset({"transposed", "channels_last", "permuted"})
# Scalar type names in a message ("to view Long as Short", "atomic_add does not support int8"): the dtypes a
# message names are where one cause was seen (keys keep them: changing the keys would re-key corpus/).
_DTYPE_NAMES = re.compile(r"\b(?:torch\.)?(?:Long|Int|Short|Char|Byte|Bool|Half|BFloat16|Float|Double|ComplexFloat|"
                          r"u?int(?:8|16|32|64)|float(?:16|32|64)|bfloat16|bool)\b")


@dataclass
class Cluster:
    key: tuple
    entries: list = field(default_factory=list)  # the representative first

    @property
    def representative(self):
        return self.entries[0]

    @property
    def variants(self) -> list:
        return self.entries[1:]


def symptom(entry) -> tuple:
    from fuzz.findings.signature import named_by_message, normalize_message, outcome_class, stride_class
    from fuzz.judge.verdict import Outcome

    v = entry.verdict
    if named_by_message(v):
        exc = (v.exc_type or "").rsplit(".", 1)[-1]
        headline = normalize_message(v.message or "").splitlines()[0][:200] if (v.message or "").strip() else ""
        return (v.outcome.value, exc, _DTYPE_NAMES.sub("<dtype>", headline))
    if v.outcome is Outcome.STRIDE:
        return (outcome_class(v), stride_class(v.message))
    return (outcome_class(v),)


def trigger(entry) -> tuple:
    from fuzz.judge.verdict import Outcome
    from fuzz.program.ir import NEUTRAL_OP, Program, dtype_class
    from fuzz.program.opdb import OPS

    p = entry.program
    if not isinstance(p, Program):  # a torch_xla step program: its own key is its cause
        return ("steps", entry.key)
    calls = [c for c in p.ops if c.op != NEUTRAL_OP]
    special = [c for c in calls if c.op in OPS and OPS[c.op].family not in _PLAIN]
    kinds = sorted({_named(c) for c in (special or calls)})
    dtypes = sorted({dtype_class(x.dtype) for x in p.inputs})
    layouts = {x.layout for x in p.inputs if x.layout != "contiguous"}
    if entry.verdict.outcome is Outcome.STRIDE:
        layouts = {"reordered" if la in _REORDERED else la for la in layouts}
    return (tuple(kinds), tuple(dtypes), tuple(sorted(layouts)), bool(p.settings.backward))


def _named(c) -> str:
    """An op with the params that are names or flags: pad(mode=reflect), to(dtype=half)."""
    from fuzz.program.ir import op_kind

    kind = op_kind(c)
    return c.op + kind[kind.index("("):] if "(" in kind else c.op


def tracked_class(entry) -> bool:
    """Whether the entry is a stride mismatch of an output with a data-dependent or mark_unbacked dim:
    the unbacked-strides class (fuzz/judge/by_design.py), one policy question and one row, which a verdict
    judged before that rule (no "unbacked_strides" number, a key of its own) still belongs to."""
    from fuzz.findings.signature import unbacked_strides
    from fuzz.judge.verdict import Outcome

    v = entry.verdict
    if v.outcome is not Outcome.STRIDE:
        return False
    if unbacked_strides(v) or "unbacked strides" in entry.signature.text:
        return True
    if entry.program.device_type() == "xla" or not v.where.startswith("output "):
        return False
    from fuzz.judge.by_design import unbacked_dims

    try:
        return bool(unbacked_dims(entry.program, int(v.where.split()[1])))
    except (ValueError, IndexError):
        return False


def cluster_key(entry) -> tuple:
    from fuzz.findings.signature import named_by_message

    if tracked_class(entry):
        return ("tracked", "unbacked strides"), ()
    if named_by_message(entry.verdict):  # the message names the cause, whatever program raised it
        return symptom(entry), ()
    return symptom(entry), trigger(entry)


def _rank(entry) -> tuple:
    p = entry.program
    ops = len(getattr(p, "ops", ()) or ())
    return (p.device_type() != "cpu", not entry.shrunk, ops, entry.key)


def clusters(entries) -> list[Cluster]:
    """The entries grouped by cluster_key, each group's representative first; groups in first-seen order."""
    groups: dict[tuple, Cluster] = {}
    for e in entries:
        k = cluster_key(e)
        groups.setdefault(k, Cluster(key=k)).entries.append(e)
    for c in groups.values():
        c.entries.sort(key=_rank)
    return list(groups.values())
