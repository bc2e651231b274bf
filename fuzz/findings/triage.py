"""Ablation of a (shrunk) finding: which part of the stack does it need?

`ablate(program, key)` reruns the program with one thing changed at a time
and records, for every variant, whether the SAME signature reproduces:

* backend: eager, aot_eager, aot_eager_decomp_partition, inductor. A finding
  that reproduces on `eager` (Dynamo capture, no compiler) is suspicious: it
  is more likely a bug of the harness (oracle, program generator) than of
  the compiler. Planted `module:attr` backends are swapped like any other.
* shapes: all marks static; dynamic=False; both (fully static). A finding
  that disappears when nothing is dynamic is a dynamic-shape bug.
* device: cpu and cuda (cuda only when torch.cuda.is_available()).
* mode: the program's torch.compile mode dropped (when it has one).
* Inductor config (only when the backend is inductor): each option the case
  set, back to its default (`all_flags`, `shapefuzz triage --all-flags`:
  every flag of FLAGS that the installed torch has and that matters on the
  program's device, toggled); then the smallest set of them that turns the
  finding off (passes: outcome ok) -- a single one if one does, else all
  of them together, shrunk greedily to a 1-minimal set.

"The same signature" is computed against the ORIGINAL program, so the value
signatures' device field does not make a cpu/cuda variant differ by
construction (op families never change: the ops are the same).

Everything here is plain data; `triage_entry(entry_dir)` writes the result as
ablation.json into a corpus entry (temp file, fsync, os.replace).
"""

from __future__ import annotations

import copy
import json
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from fuzz.files import write_atomic  # one helper for the package (report.py imports it from here)
from fuzz.program.ir import Program
from fuzz.findings.signature import in_bucket, signature
from fuzz.judge.verdict import Outcome, Verdict
from fuzz.judge.poison import needs_isolation

VERSION = 1
BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
DEVICES = ("cpu", "cuda")

# Inductor config flags worth toggling for dynamic-shape bugs, and the devices
# on which they change the generated code. Keys are torch._inductor.config
# paths; those missing from the installed torch are skipped.
FLAGS: dict[str, tuple[str, ...]] = {
    "split_reductions": ("cpu", "cuda"),
    "comprehensive_padding": ("cpu", "cuda"),
    "assume_aligned_inputs": ("cpu", "cuda"),
    # off by default: Inductor keeps low-precision casts in fp32 (a design
    # choice); a divergence it turns off is that, not a bug
    "emulate_precision_casts": ("cpu", "cuda"),
    "cpp.simdlen": ("cpu",),
    "cpp_wrapper": ("cpu", "cuda"),
    "shape_padding": ("cuda",),
    "triton.autotune_pointwise": ("cuda",),
    "triton.persistent_reductions": ("cuda",),
    "triton.divisible_by_16": ("cuda",),
    "triton.cudagraphs": ("cuda",),
    "coordinate_descent_tuning": ("cuda",),
    "max_autotune": ("cuda",),
}

# Row statuses.
REPRODUCES = "reproduces"  # the same signature
PASSES = "passes"  # outcome ok
OTHER = "other"  # another finding, or rejected / invalid / flaky
SKIPPED = "skipped"  # not applicable here (no CUDA, flag missing, ...)
ERROR = "error"  # the variant could not be judged (harness error)

Evaluate = Callable[[Program], Verdict]


@dataclass
class AblationRow:
    axis: str  # baseline | backend | shapes | device | mode | inductor-config | inductor-config-set
    variant: str  # what was run, in torch.compile terms: 'backend="eager"', 'dynamic=False', ...
    changes: dict = field(default_factory=dict)  # settings changed against the original program
    status: str = SKIPPED  # one of REPRODUCES, PASSES, OTHER, SKIPPED, ERROR
    reproduces: bool | None = None  # the same signature reproduced; None when not run
    outcome: str = ""  # the variant's outcome ("" when not run)
    signature: str = ""  # the variant's signature key ("" when not run)
    summary: str = ""  # the variant's one-line result, or why it was skipped / failed
    note: str = ""  # what the row means, when it means something on its own
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict) -> "AblationRow":
        known = AblationRow.__dataclass_fields__
        return AblationRow(**{k: v for k, v in d.items() if k in known})


# -- variants -----------------------------------------------------------------

def _variant(p: Program, **settings) -> Program:
    q = copy.deepcopy(p)
    for k, v in settings.items():
        setattr(q.settings, k, v)
    return q


def _static_marks(p: Program) -> Program:
    q = copy.deepcopy(p)
    for x in q.inputs:
        x.marks = ["static"] * len(x.marks)
    return q


def _device_kind(device: str) -> str:
    return (device or "cpu").split(":")[0]


def _config_value(key: str):
    """The installed torch._inductor.config value at dotted `key`; raises
    AttributeError when the key does not exist."""
    import torch._inductor.config as cfg

    obj = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


def _mode_options(p: Program) -> dict:
    if not p.settings.mode:
        return {}
    try:
        import torch

        return dict(torch._inductor.list_mode_options(p.settings.mode, p.settings.dynamic))
    except Exception:  # noqa: BLE001 - an unknown mode: the run will say so
        return {}


def _toggled(value):
    if isinstance(value, bool):
        return not value
    if value is None:
        return 1  # cpp.simdlen: None (auto) -> 1 (scalar code)
    return None  # an int: back to auto


def relevant_flags(p: Program) -> dict:
    """flag -> the toggled value to try, for p's device; flags missing from the
    installed torch are left out."""
    device = _device_kind(p.settings.device)
    mode_opts = _mode_options(p)
    out = {}
    for key, devices in FLAGS.items():
        if device not in devices:
            continue
        try:
            default = _config_value(key)
        except AttributeError:
            continue
        current = p.settings.options.get(key, mode_opts.get(key, default))
        if not isinstance(current, (bool, int, type(None))):
            continue
        out[key] = _toggled(current)
    return out


def _with_options(p: Program, flags: dict) -> Program:
    q = copy.deepcopy(p)
    q.settings.options = {**q.settings.options, **flags}
    return q


def _flags_text(flags: dict) -> str:
    return ", ".join(f"torch._inductor.config.{k} = {v!r}" for k, v in flags.items())


# -- running ------------------------------------------------------------------

def default_evaluate(p: Program) -> Verdict:
    """Judge in this process (fuzz.judge.runner.run_case, with its rerun)."""
    from fuzz.judge.runner import run_case

    return run_case(p)


@contextmanager
def isolated_evaluate(timeout: float = 300.0) -> Iterator[Evaluate]:
    """An evaluate function that judges each variant in a sandboxed worker
    process, so a variant that crashes or hangs becomes a verdict instead of
    taking the triage down."""
    from fuzz.campaign.workers import WorkerPool

    with WorkerPool(workers=1, timeout=timeout) as pool:
        def evaluate(p: Program) -> Verdict:
            pool.submit(0, p)
            for _, verdict, info in pool.results():
                if info.get("error") == "harness":
                    raise RuntimeError(f"{verdict.get('exc_type')}: {verdict.get('message')}")
                return Verdict.from_dict(verdict)
            raise RuntimeError("the worker pool returned no verdict")

        yield evaluate


class _Runner:
    def __init__(self, original: Program, key: str, evaluate: Evaluate, text: str = ""):
        self.original, self.key, self.evaluate, self.text = original, key, evaluate, text

    def run(self, axis: str, variant: str, p: Program, changes: dict, note_if_reproduces: str = "",
            note_if_passes: str = "") -> AblationRow:
        row = AblationRow(axis=axis, variant=variant, changes=changes)
        start = time.perf_counter()
        try:
            v = self.evaluate(p)
        except Exception as e:  # noqa: BLE001 - one variant must not stop the triage
            row.status, row.summary = ERROR, f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            row.seconds = time.perf_counter() - start
            return row
        row.seconds = time.perf_counter() - start
        row.outcome = v.outcome.value
        sig = signature(v, self.original)
        row.signature = sig.key
        row.summary = v.summary()
        # a shrunk value finding may carry a subset of its key's op families
        row.reproduces = v.is_finding and (sig.key == self.key or bool(self.text) and in_bucket(sig.text, self.text))
        if row.reproduces:
            row.status, row.note = REPRODUCES, note_if_reproduces
        elif v.outcome is Outcome.OK:
            row.status, row.note = PASSES, note_if_passes
        else:
            row.status = OTHER
        return row


def _skip(axis: str, variant: str, changes: dict, why: str) -> AblationRow:
    return AblationRow(axis=axis, variant=variant, changes=changes, status=SKIPPED, summary=why)


def _settings_text(p: Program) -> str:
    s = p.settings
    parts = [f"backend={s.backend!r}", f"dynamic={s.dynamic!r}", f"device={s.device!r}"]
    if s.mode:
        parts.append(f"mode={s.mode!r}")
    if s.options:
        parts.append(f"options={s.options!r}")
    return ", ".join(parts)


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def ablate(program: Program, signature_key: str, *, evaluate: Evaluate | None = None,
           signature_text: str = "", all_flags: bool = False) -> list[AblationRow]:
    """Rerun `program` with variations; one row per variant, in a fixed order:
    baseline, backend, shapes, device, mode, inductor-config(-set).
    `signature_text` (the entry's) lets a shrunk program match its bucket.
    The Inductor options tried are those the case set, each back to its
    default (set_options); `all_flags`: every flag of FLAGS, toggled."""
    evaluate = evaluate or default_evaluate
    r = _Runner(program, signature_key, evaluate, signature_text)
    rows = [r.run("baseline", f"as found: {_settings_text(program)}", program, {},
                  note_if_passes="does not reproduce as found: flaky or fixed?")]
    rows += _backend_rows(r, program) + _shape_rows(r, program) + _device_rows(r, program)
    if program.settings.mode:
        rows.append(r.run("mode", "mode=None (default)", _variant(program, mode=None), {"mode": None}))
    return rows + _config_rows(r, program, rows[0], all_flags)


def _backend_rows(r: _Runner, program: Program) -> list[AblationRow]:
    rows = []
    for b in BACKENDS:
        if b == program.settings.backend:
            continue
        note = ""
        if b == "eager":
            note = ("reproduces with backend='eager' (graph capture only, no compiler): "
                    "suspect the test harness, not the compiler")
        rows.append(r.run("backend", f"backend={b!r}", _variant(program, backend=b), {"backend": b},
                          note_if_reproduces=note))
    return rows


def _shape_rows(r: _Runner, program: Program) -> list[AblationRow]:
    rows = []
    marked = any(m != "static" for x in program.inputs for m in x.marks)
    if marked:
        rows.append(r.run("shapes", "all dims static (no mark_dynamic/maybe_mark_dynamic/mark_unbacked)",
                          _static_marks(program), {"marks": "static"}))
    if program.settings.dynamic is not False:
        rows.append(r.run("shapes", "dynamic=False", _variant(program, dynamic=False), {"dynamic": False}))
    static = _variant(_static_marks(program), dynamic=False)
    changes = {"dynamic": False, "marks": "static"}
    if marked or program.settings.dynamic is not False:
        rows.append(r.run("shapes", "fully static: dynamic=False and all dims static", static, changes,
                          note_if_reproduces="reproduces with static shapes: not specific to dynamic shapes",
                          note_if_passes="static shapes pass: a dynamic-shape bug"))
    else:
        rows.append(_skip("shapes", "fully static: dynamic=False and all dims static", changes,
                          "the program is static already"))
    return rows


def _device_rows(r: _Runner, program: Program) -> list[AblationRow]:
    rows = []
    here = _device_kind(program.settings.device)
    for dev in DEVICES:
        if dev == here:
            continue
        if here not in DEVICES:
            rows.append(_skip("device", f"device={dev!r}", {"device": dev},
                              "not applicable: the device is neither cpu nor cuda"))
        elif dev == "cuda" and not _cuda_available():
            rows.append(_skip("device", "device='cuda'", {"device": "cuda"}, "CUDA is not available here"))
        else:
            rows.append(r.run("device", f"device={dev!r}", _variant(program, device=dev), {"device": dev}))
    return rows


def set_options(p: Program) -> dict:
    """option -> its default, for each Inductor option the case set to another
    value (those missing from the installed torch left out). The flags a case
    did not set never changed a campaign's answer: about 15 of a CUDA
    triage's 20 rows, a fresh compile each, went to them."""
    out = {}
    for key, value in (p.settings.options or {}).items():
        try:
            default = _config_value(key)
        except AttributeError:
            continue
        if value != default:
            out[key] = default
    return out


def _config_rows(r: _Runner, program: Program, baseline: AblationRow, all_flags: bool) -> list[AblationRow]:
    """One row per flag tried (see ablate), then, when none turns the finding off
    alone, the smallest set found that does."""
    def skip(why: str) -> list[AblationRow]:
        return [_skip("inductor-config", "Inductor config flags", {}, why)]
    if program.settings.backend != "inductor":
        return skip("not applicable: the backend is not inductor")
    if not baseline.reproduces:
        return skip("not searched: the program as found does not reproduce")
    flags = relevant_flags(program) if all_flags else set_options(program)
    if not flags:
        return skip("no relevant flag exists in this torch for this device" if all_flags else
                    "the case set no Inductor option (every flag: shapefuzz triage --all-flags)")
    rows, off = [], []
    for k, v in flags.items():
        row = r.run("inductor-config", _flags_text({k: v}), _with_options(program, {k: v}), {"options": {k: v}},
                    note_if_passes="this flag alone turns it off")
        rows.append(row)
        if row.status == PASSES:
            off.append(k)
    if off or len(flags) < 2:
        return rows
    return rows + _smallest_set(r, program, flags)


def _smallest_set(r: _Runner, program: Program, flags: dict) -> list[AblationRow]:
    """All `flags` together, then greedily fewer: the rows, the smallest passing set marked."""
    current = dict(flags)
    row = r.run("inductor-config-set", _flags_text(current), _with_options(program, current), {"options": current})
    rows = [row]
    if row.status != PASSES:
        row.note = "all flags together do not turn it off"
        return rows
    for k in list(flags):  # greedy: drop every flag the rest still pass without
        trial = {kk: vv for kk, vv in current.items() if kk != k}
        if not trial:
            break
        row = r.run("inductor-config-set", _flags_text(trial), _with_options(program, trial), {"options": trial})
        rows.append(row)
        if row.status == PASSES:
            current = trial
    # the set found is the last passing one: mark it
    for row in reversed(rows):
        if row.status == PASSES and row.changes.get("options") == current:
            row.note = "smallest set of flags found that turns it off"
            break
    return rows


# -- conclusions ---------------------------------------------------------------

def summarize(rows: list[AblationRow]) -> dict:
    """What the rows say, as data: which backends and devices reproduce,
    whether it is a harness bug or a dynamic-shape bug (None: not known), and
    the smallest Inductor flag set that turns it off (None if none was found
    or tried). Nothing is concluded when the baseline does not reproduce."""
    rows = [r if isinstance(r, AblationRow) else AblationRow.from_dict(r) for r in rows]
    base = next((r for r in rows if r.axis == "baseline"), None)
    backends = [r.changes["backend"] for r in rows if r.axis == "backend" and r.reproduces]
    static = next((r for r in rows if r.axis == "shapes" and r.changes == {"dynamic": False, "marks": "static"}), None)
    flags_off = [r.changes["options"] for r in rows if r.axis == "inductor-config" and r.status == PASSES]
    minimal = None
    if flags_off:
        minimal = flags_off[0]
    else:
        for r in rows:
            if r.axis == "inductor-config-set" and r.note.startswith("smallest set"):
                minimal = r.changes["options"]
    if not (base and base.reproduces):  # nothing to ablate: no conclusions
        return {"baseline_reproduces": False, "harness_bug": False, "backends_reproducing": [],
                "dynamic_shape_bug": None, "devices_reproducing": [], "flags_turning_off": [], "minimal_flags": None}
    return {
        "baseline_reproduces": True,
        "harness_bug": any(r.axis == "backend" and r.changes.get("backend") == "eager" and r.reproduces
                           for r in rows),
        "backends_reproducing": backends,
        "dynamic_shape_bug": None if static is None or static.status in (SKIPPED, ERROR) else not static.reproduces,
        "devices_reproducing": [r.changes["device"] for r in rows if r.axis == "device" and r.reproduces],
        "flags_turning_off": flags_off,
        "minimal_flags": minimal,
    }


def ablation_document(rows: list[AblationRow], program: Program, signature_key: str,
                      signature_text: str = "") -> dict:
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    return {
        "version": VERSION,
        "signature": {"key": signature_key, "text": signature_text},
        "settings": asdict(program.settings),
        "program": program.to_dict(),  # what was ablated (the entry's program may be shrunk later)
        "torch": torch_version,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "rows": [r.to_dict() for r in rows],
        "summary": summarize(rows),
    }


# -- corpus entries -------------------------------------------------------------

def load_ablation(entry_dir) -> dict | None:
    """The entry's ablation.json, or None when it has none or it is not one (corpus_files.py's schema)."""
    from fuzz.findings.store.corpus_files import CorpusFileError, read

    try:
        d = read(Path(entry_dir) / "ablation.json")
    except CorpusFileError:
        return None
    return d if isinstance(d.get("rows"), list) else None


def triage_entry(entry_dir, *, evaluate: Evaluate | None = None, isolate: bool | None = None,
                 timeout: float = 300.0, all_flags: bool = False) -> dict:
    """Ablate a corpus entry and write ablation.json into it; returns the
    document written. isolate=None judges crash/hang findings in a sandboxed
    worker (they would take this process down) and the rest in-process.
    Raises fuzz.findings.store.corpus.CorpusError for an unreadable entry."""
    from fuzz.findings.store.corpus import Corpus

    entry = Corpus(Path(entry_dir).parent).load(entry_dir)
    if isolate is None:
        isolate = evaluate is None and needs_isolation(entry.verdict)
    bucket = entry.bucket  # a re-keyed entry: its program's own signature
    if isolate and evaluate is None:
        with isolated_evaluate(timeout) as ev:
            rows = ablate(entry.program, bucket.key, evaluate=ev, signature_text=bucket.text, all_flags=all_flags)
    else:
        rows = ablate(entry.program, bucket.key, evaluate=evaluate, signature_text=bucket.text, all_flags=all_flags)
    doc = ablation_document(rows, entry.program, entry.key, entry.signature.text)
    write_ablation(entry_dir, doc)
    return doc


def write_ablation(entry_dir, doc: dict) -> None:
    """ablation.json of an entry (also where a triage computed elsewhere lands: fuzz/campaign/cluster/followups.py)."""
    from fuzz.findings.store.corpus_files import entry_inside

    write_atomic(entry_inside(entry_dir) / "ablation.json", json.dumps(doc, indent=2, sort_keys=True) + "\n")
