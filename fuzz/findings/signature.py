"""Signatures: the bucket of a finding.

Two findings share a signature when they are the same bug, whatever program or
sizes exposed it. For an exception the bucket is outcome + exception type +
the message with every program-dependent detail masked + the innermost frame
inside torch/triton/torch_xla. For a value outcome (divergence, shape, stride,
...) there is no message, so the bucket is deliberately coarse: outcome + what
kind of value differed + the set of op families in the program.

The shrinker pins the signature, so whatever goes into it must survive
shrinking: no sizes, no symbol or buffer numbers, no paths or hashes.

That signature is provisional: a value finding's op families are those of the
program that happened to expose it, so one bug found in many programs falls
in many buckets. Once shrunk, an entry is re-keyed by its minimal signature
(`minimal_signature`): the same outcome part (an output mismatch that is a
wrongly mutated input seen through an aliasing output counts as that input
mismatch), then what the shrunk program
still holds -- the op kinds the bug needs, in order, and the features of its
inputs and settings that are not the defaults (marks, layout, dtype class,
mode, Inductor flags) -- and the device. The shrinker removes everything a bug
does not need (an op it does not need becomes NEUTRAL_OP), so the same
minimal program always gives the same key, and programs that differ in
anything the key names are different bugs. Two classes are keyed by what
went wrong rather than by the program around it: a stride mismatch by how
the strides differ (padded, dim order, denser than eager's view) and the op
families, and a finding of a program with a data-dependent op by those ops.
A stride mismatch of an output whose strides hold unbacked symbols is one
tracked class, one key as found and once shrunk: Inductor gives up exact
stride matching there on purpose. An exception whose message says what went wrong is keyed by that message,
its type and innermost frame and the device, as found: two shrinks of one
such bug may keep different ops. Dtype names in messages are masked like
numbers: one refusal of int8, int16 and uint8 is one bug.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from fuzz.judge.verdict import Outcome, Verdict
from fuzz.program.ir import NEUTRAL_BINARY_FAMILY, NEUTRAL_FAMILY

# Bump when the bucketing changes, so old corpus entries can be re-bucketed.
VERSION = 3  # 2: dtype names masked; strides and data-dependent programs keyed by what went wrong;
# 3: an exception that names the bug keyed by its message and frame, not by the shrunk program

_VALUE_OUTCOMES = frozenset({Outcome.DIVERGENCE, Outcome.NONFINITE, Outcome.SHAPE, Outcome.DTYPE,
                             Outcome.STRIDE, Outcome.RECOMPILE, Outcome.GRADIENT, Outcome.INPUT_MUTATION,
                             Outcome.ALIASING,
                             Outcome.OK})
_MAX_MESSAGE = 400


@dataclass(frozen=True)
class Signature:
    key: str  # 12 hex chars of sha256(text): the corpus directory name
    text: str  # human-readable, "outcome | type | message | frame"
    minimal: bool = False  # made from a shrunk program (minimal_signature), not as found

    def to_dict(self) -> dict:
        d = {"key": self.key, "text": self.text, "version": VERSION}
        return {**d, "minimal": True} if self.minimal else d

    @staticmethod
    def from_dict(d: dict) -> "Signature":
        return Signature(key=d["key"], text=d["text"], minimal=d.get("minimal") is True)

    @staticmethod
    def of_text(text: str, minimal: bool = False) -> "Signature":
        return Signature(key=hashlib.sha256(text.encode()).hexdigest()[:12], text=text, minimal=minimal)


# -- messages -----------------------------------------------------------------

def _headline(msg: str) -> str:
    """The line of a (possibly long) message that names the bug.

    Most torch messages put it first and then add hints, dumps of the graph
    or of tensors. Exceptions: Triton's CompilationError starts with "at 7:11:"
    and ends with the real error; a C++ compile error starts with "C++ compile
    error" and buries "error: ..." in the compiler output; wrappers end their
    first line with "raised:" and put the cause on the next one.
    """
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    if not lines:
        return ""
    head = lines[0]
    if re.search(r"\bat \d+:\d+:\s*$", head) and len(lines) > 1:
        return f"{head} {lines[-1]}"
    for ln in lines[1:]:
        m = re.match(r"^(?:\S*:\d+(?::\d+)?:\s*)?(?:fatal )?error:\s*(.+)$", ln)
        if m:
            return f"{head}: {m.group(1)}"
    if head.endswith(":") and len(lines) > 1:
        return f"{head} {lines[1]}"
    return head


_SYMBOL_PREFIXES = "zuf|zf|ps|ks|tmp|indirect|idx|r0_|r1_|s|u|q|x|y|z|r"

# Ordered: each rule sees the output of the ones before it.
_RULES = [
    # a signal or exit status tells crashes apart: keep it out of the number rule
    (re.compile(r"\b(signal|exit code|exitcode|returncode|return code)[ =:]*-?(\d+)", re.I), r"\1 #\2"),
    # addresses and object reprs carry ids: "<Foo object at 0x7f..>"
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"\b(id|pid|tid|rank)[=: ]+\d+"), r"\1=<n>"),
    # Inductor's generated sources and caches live under hashed paths
    (re.compile(r"(?:[A-Za-z]:)?[\w./\\-]*(?:torchinductor|inductor_cache|triton[/_]cache)[\w./\\-]*"), "<tmp>"),
    (re.compile(r"(?:[A-Za-z]:)?[/\\]tmp[/\\][\w./\\-]*"), "<tmp>"),
    # installed or checked-out torch/triton sources: keep the package-relative part
    (re.compile(r"(?:[A-Za-z]:)?[\w./\\-]*?[/\\](?=(?:torch_xla|torch|triton)[/\\][\w./\\-]*\.(?:py|h|cpp|cu)\b)"), ""),
    (re.compile(r"(?<![\w.<>])(?:[A-Za-z]:)?(?:[/\\][\w.-]+)+[/\\]([\w.-]+)"), r"<path>/\1"),
    # kernel names spell out the fused ops, which differ from program to program
    (re.compile(r"\btriton_(poi|red|per|tem|for|sca|mix|unk|helper)_\w*"), r"triton_\1_<kernel>"),
    (re.compile(r"\btriton_+\d+\b"), "triton_<kernel>"),
    (re.compile(r"\bcpp_fused_\w*"), "cpp_<kernel>"),
    (re.compile(r"\bkernel_?\d+\b"), "kernel<n>"),
    # hashes: long alphanumeric runs with both letters and digits
    (re.compile(r"\b(?=[a-z0-9]*\d)(?=[a-z0-9]*[a-z])[a-z0-9]{20,}\b"), "<hash>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b"), "<hash>"),
    # XLA shapes "f16[4,1]{1,0}": element type, sizes and layout are the program's, not the bug's
    (re.compile(r"\b(?:pred|bf16|[fsuc]\d{1,3})\[[\d,\s]*\](?:\{[\d,\s]*\})?"), "<xla-shape>"),
    # dtypes are parameters of a message ("atomic_add does not support int16"), as sizes are
    (re.compile(r"\b(?:torch\.)?(?:u?int(?:8|16|32|64)|float(?:8\w*|16|32|64)|bfloat16|complex(?:32|64|128)|bool"
                r"|(?:fp|bf)(?:8|16|32|64))\b"), "<dtype>"),
    # buffers, graph inputs, kernel pointers, FX node names: the number is an accident
    (re.compile(r"\b(buf|arg|in_ptr|out_ptr|in_out_ptr|ptr|primals_|tangents_|getitem_)\d+(_\d+)?\b"), r"\1<n>"),
    # size symbols keep their class (s: backed, u: unbacked, ps: precomputed, ...)
    (re.compile(rf"\b({_SYMBOL_PREFIXES})\d+\b"), r"\1?"),
    (re.compile(r"(?<=_)\d+\b"), "<n>"),
    (re.compile(r"(?<![\w.#])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)(?!\.\d)"), "N"),
]

# An element of a size list once numbers and symbols are masked: "N", "s?", "N*s? + N".
_ITEM = r"\s*[-+*/()\s]*(?:(?:N|<n>|[a-z_]+\d*\?)[-+*/()\s]*)+"
_LIST = re.compile(rf"\[(?:{_ITEM},)*{_ITEM},?\s*\]")
_TUPLE = re.compile(rf"(?<![\w.])\((?:{_ITEM},)+(?:{_ITEM})?\s*\)")


def normalize_message(msg: str) -> str:
    """The message's headline with program-dependent details masked.

    Masks numbers (N), size lists and tuples ([...], (...)), XLA element
    shapes (<xla-shape>), size symbols by
    class (s?, u?, ps?, zuf?, tmp?), buffer/kernel/pointer names (buf<n>,
    triton_poi_<kernel>, cpp_<kernel>), addresses (<addr>), hashes (<hash>),
    temporary paths (<tmp>) and other absolute paths (<path>/basename).
    """
    s = _headline(msg or "")[:4 * _MAX_MESSAGE]  # bounds the regex work on huge lines
    for pat, rep in _RULES:
        s = pat.sub(rep, s)
    s = _LIST.sub("[...]", s)
    s = _TUPLE.sub("(...)", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s[:_MAX_MESSAGE]


# -- frames -------------------------------------------------------------------

_ROOT = re.compile(r"(?:^|/)(torch_xla|torch|triton)/")

# Frames that only forward a call; the bug is never there.
_TRAMPOLINES = {
    ("torch._ops", "__call__"), ("torch._ops", "_call_overload_packet_from_python"),
    ("torch.utils._stats", "wrapper"), ("torch._dynamo.utils", "time_wrapper"),
    ("torch._compile", "inner"), ("torch._dynamo.eval_frame", "_fn"),
    ("torch.utils._contextlib", "decorate_context"), ("torch._prims_common.wrappers", "_fn"),
    ("torch.fx.experimental.recording", "wrapper"),
}


def _parse_frame(frame: str) -> tuple[str, str]:
    m = re.match(r"^(.*):(\d+):([^:]*)$", frame)
    if m:
        return m.group(1), m.group(3)
    path, _, func = frame.rpartition(":")
    return path, func


def _module_of(path: str) -> str | None:
    """torch/_inductor/graph.py (anywhere on disk) -> torch._inductor.graph."""
    path = path.replace("\\", "/")
    matches = list(_ROOT.finditer(path))
    if not matches:
        return None
    pkgs = max(path.rfind("site-packages/"), path.rfind("dist-packages/"))
    if pkgs >= 0:
        after = [m for m in matches if m.start() >= pkgs]
        m = after[0] if after else matches[-1]
    else:  # a source checkout: prefer torch over a triton/ folder inside it
        torchy = [m for m in matches if m.group(1) != "triton"]
        m = (torchy or matches)[-1]
    rel = path[m.start(1):]
    rel = re.sub(r"\.(py|pyx)$", "", rel)
    mod = rel.replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def innermost_frame(frames: list) -> str:
    """"module:function" of the innermost frame inside torch, triton or
    torch_xla, skipping pure call-forwarding frames; "" when there is none."""
    fallback = ""
    for frame in reversed(frames or []):
        path, func = _parse_frame(str(frame))
        mod = _module_of(path)
        if mod is None:
            continue
        if (mod, func) not in _TRAMPOLINES:
            return f"{mod}:{func}"
        fallback = fallback or f"{mod}:{func}"
    return fallback


# CUDA reports kernel faults at some later API call, so the frame is noise.
_ASYNC_CUDA = re.compile(r"CUDA error|Triton Error \[CUDA\]|CUDA_ERROR|cudaError|device-side assert"
                         r"|illegal memory access|misaligned address|unspecified launch failure", re.I)


# -- signatures ---------------------------------------------------------------

def _families(program) -> str:
    return "*" if program is None else program.op_classes()


_FAMILIES_RE = re.compile(r"\| families: ([^|]*?) \|")


def in_bucket(text: str, target_text: str, relax_families: bool = True) -> bool:
    """Whether signature `text` falls in the bucket `target_text`: equal, or
    (value outcomes, `relax_families`) equal but for a non-empty subset of the
    target's op families, the neutral ops' families allowed as well (the
    shrinker puts NEUTRAL_OP in place of ops a bug does not need, and
    NEUTRAL_BINARY in place of two). The shrinker accepts such programs, so a
    shrunk entry's program may carry other families than its key was made from."""
    if text == target_text:
        return True
    m, t = _FAMILIES_RE.search(text), _FAMILIES_RE.search(target_text)
    if not relax_families or not m or not t:
        return False
    fams, target = set(m.group(1).split(",")), set(t.group(1).split(","))
    same_rest = _FAMILIES_RE.sub("|", text) == _FAMILIES_RE.sub("|", target_text)
    return same_rest and fams <= target | {NEUTRAL_FAMILY, NEUTRAL_BINARY_FAMILY} and bool(fams - {"-"})


def _is_value(verdict: Verdict) -> bool:
    return verdict.outcome in _VALUE_OUTCOMES and not verdict.exc_type


def _what(verdict: Verdict) -> str:
    """The program-independent part: outcome | where (a value), or outcome |
    type | message | frame (an exception)."""
    outcome = verdict.outcome.value
    if _is_value(verdict):
        where = re.sub(r"[\s\d]+.*$", "", verdict.where.strip()) or "-"
        return f"{outcome} | {where}"
    exc = verdict.exc_type.rsplit(".", 1)[-1] if verdict.exc_type else "-"
    msg = normalize_message(verdict.message)
    if msg.startswith(f"{exc}: "):  # str(e) vs a log line that repeats the type
        msg = msg[len(exc) + 2:]
    frame = "" if _ASYNC_CUDA.search(verdict.message or "") else innermost_frame(verdict.frames)
    return f"{outcome} | {exc} | {msg or '-'} | {frame or '-'}"


def aliases_input(verdict: Verdict) -> bool:
    """A value mismatch at an output that is the storage of an input that also
    mismatched (the runner's numbers["input_alias"]): an input mutated wrongly,
    seen through the output that aliases it."""
    return _is_value(verdict) and bool(verdict.numbers.get("input_alias"))


def outcome_class(verdict: Verdict) -> str:
    """The outcome a minimal signature names: an input mismatch seen at an
    aliasing output counts as the input mismatch it is."""
    return Outcome.INPUT_MUTATION.value if aliases_input(verdict) else verdict.outcome.value


def alias_bucket(text: str) -> str:
    """The input-mutation bucket a value signature's finding falls in when its
    output aliases the mutated input (the shrinker accepts either)."""
    parts = text.split(" | ")
    return " | ".join([Outcome.INPUT_MUTATION.value, "input"] + parts[2:]) if len(parts) > 2 else text


def upstream_buckets(text: str) -> list:
    """Buckets whose findings are the cause of a value finding in bucket
    `text`: a shape mismatch of a program with a data-dependent op (nonzero,
    masked_select, unique, bincount, item: the op's output shape follows its
    input's values) can be a wrong value upstream of that op, so a divergence
    of the same families reproduces it too. Without such an op a shape does
    not depend on values, and a divergence would be another bug."""
    parts = text.split(" | ")
    m = _FAMILIES_RE.search(text)
    if parts[0] != Outcome.SHAPE.value or not m or "data" not in m.group(1).split(","):
        return []
    return [" | ".join([Outcome.DIVERGENCE.value] + parts[1:])]


def unbacked_strides(verdict: Verdict) -> bool:
    """A stride mismatch of an output whose strides hold unbacked symbols (the
    runner's numbers["unbacked_strides"]): Inductor gives up exact stride
    matching there on purpose, so every such mismatch is one tracked class,
    one key, whatever ops or program showed it."""
    return verdict.outcome is Outcome.STRIDE and _is_value(verdict) and bool(verdict.numbers.get("unbacked_strides"))


def _unbacked_strides_text(program) -> str:
    device = "-" if program is None else program.device_type()
    return f"{Outcome.STRIDE.value} | unbacked strides | device: {device}"


def signature(verdict: Verdict, program=None) -> Signature:
    """The (provisional) bucket of `verdict`. `program` is needed for value
    outcomes (its op families are part of the bucket); without it they read "*"."""
    if unbacked_strides(verdict):  # the same text as found and once shrunk: one key
        return Signature.of_text(_unbacked_strides_text(program))
    if _is_value(verdict):
        device = "-" if program is None else program.device_type()
        return Signature.of_text(f"{_what(verdict)} | families: {_families(program)} | device: {device}")
    return Signature.of_text(_what(verdict))


def minimal_signature(verdict: Verdict, program) -> Signature:
    """The bucket of a shrunk finding: the outcome part of `signature`, then
    what `program` (the shrunk one; program.minimal_parts()) says the bug
    needs, then the device:

        divergence | output | needs: pad(mode=reflect) | marks: - | layout: - | dtype: - | ... | device: cpu

    A pure function of the program and its verdict: the same minimal program
    always gives the same key. Its text never equals a provisional one
    ("needs:" against "families:", or more fields), so the keys do not clash."""
    if unbacked_strides(verdict):
        return Signature.of_text(_unbacked_strides_text(program), minimal=True)
    what = f"{outcome_class(verdict)} | input" if aliases_input(verdict) else _what(verdict)
    if named_by_message(verdict):  # the exception names the bug: not the parts a shrink happened to keep
        return Signature.of_text(f"{what} | device: {program.device_type()}", minimal=True)
    data_ops = _data_ops(program)
    if data_ops:  # the data-dependent ops and what went wrong, not the program around them
        parts = f"data: {' > '.join(data_ops)}"
    elif verdict.outcome is Outcome.STRIDE and _is_value(verdict):
        parts = f"strides: {stride_class(verdict.message)} | families: {program.op_classes()}"
    else:
        parts = " | ".join(f"{k}: {v}" for k, v in program.minimal_parts().items())
    return Signature.of_text(f"{what} | {parts} | device: {program.device_type()}", minimal=True)


def settled_signature(verdict: Verdict, program) -> Signature | None:
    """The minimal signature a shrink would give a finding, when no shrink can
    change it: an exception named by its message (its key holds no part of
    the program). None otherwise. A finding whose settled key the corpus (or a
    known-issues rule) holds already needs no shrink to be counted there."""
    return minimal_signature(verdict, program) if named_by_message(verdict) else None


def named_by_message(verdict: Verdict) -> bool:
    """An exception whose masked message says what went wrong (three words or
    more): its type, message and innermost frame are the bug, whatever
    program raised it. Two shrinks of one such bug often keep different ops
    (a shrink is cut short, or either of two ops can raise it), and a
    minimal key naming those would split it. Crashes, hangs and bare
    messages keep the program's parts."""
    if verdict.outcome not in (Outcome.COMPILED_ERROR, Outcome.EAGER_ERROR):
        return False
    return len(re.findall(r"[A-Za-z]{2,}", normalize_message(verdict.message))) >= 3


def _data_ops(program) -> list:
    """The data-dependent ops of a compiled program (family "data"), in order."""
    from fuzz.program.opdb import OPS  # lazy: the op database pulls in hypothesis

    ops = getattr(program, "ops", None)
    if not ops or not hasattr(ops[0], "args"):
        return []
    return [c.op for c in ops if c.op in OPS and OPS[c.op].family == "data"]


_STRIDES = re.compile(r"strides \(([-\d,\s]*)\) vs eager \(([-\d,\s]*)\)(?: \(shape \(([\d,\s]*)\)\))?")


def stride_class(message: str) -> str:
    """How a stride mismatch's compiled strides differ from eager's: "padded"
    (same dim order, none smaller: a padded layout), "denser" (same order, none
    larger: eager's is a view with gaps), "dim order" (another order of the
    dims in memory), "other"."""
    m = _STRIDES.search(message or "")
    if not m:
        return "other"
    got, want, shape = ([int(x) for x in (g or "").replace(",", " ").split()] for g in m.groups())
    if len(got) != len(want):
        return "other"
    if len(shape) == len(got):  # the strides of dims of size 0 or 1 are arbitrary: leave them out
        got, want = ([s for s, n in zip(x, shape) if n > 1] for x in (got, want))

    def order(s):
        return sorted(range(len(s)), key=lambda i: (-s[i], i))
    if order(got) != order(want):
        return "dim order"
    if all(g >= w for g, w in zip(got, want)):
        return "padded"
    if all(g <= w for g, w in zip(got, want)):
        return "denser"
    return "other"
