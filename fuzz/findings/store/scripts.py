"""An entry's script, repro.py, and what meta.json says of it; the full judging
harness, generated on demand and never stored. Also the digests that tie a
script or report to the program it was made from, and the variants an entry
was seen with.

repro.py holds the short repro where the finding has one and it failed
standalone (fuzz/program/short_repro.py). Otherwise: for a torch_xla step
program, its harness (loading.harness_is_repro: the script its issue
carries); for a torch.compile program, a note that says why there is no
short form and how to generate the harness (`shapefuzz repro ENTRY
--harness`); a codegen failure leaves a stub that says so. No command
runs a stored script: whatever runs is generated afresh from the validated
program (replay, sanitize, the standalone checks, triage, versions, traces).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from fuzz.findings.signature import Signature
from fuzz.judge.verdict import Verdict
from fuzz.program.ir import Program
from fuzz.program.loading import harness_is_repro, load_program, repro_source
from fuzz.program.quoting import doc_text


HARNESS_COMMAND = "shapefuzz repro ENTRY --harness -o harness.py"


def entry_repro(program: Program, sig: Signature) -> tuple[str, str | None]:
    """(The full judging harness, None), or (a stub that says why there is none,
    the reason): a codegen bug must not cost us the finding. Generated, never
    read from the entry."""
    from fuzz.judge.backends import BackendError

    title = f"shapefuzz {sig.key}: {sig.text}"
    try:
        return repro_source(program, title), None
    except BackendError:  # a module:attr backend the command line did not allow: no code, and no stub either
        raise
    except Exception as e:  # noqa: BLE001 - any codegen failure
        why = f"{type(e).__name__}: {e}"
        stub = (f'"""{doc_text(title)}\n\nNo repro: code generation failed: {doc_text(why)}\n"""\nimport sys\n\n'
                f"sys.exit({('no repro: ' + why)!r})\n")
        return stub, why


def harness_note(sig: Signature, why) -> str:
    """repro.py of a torch.compile finding without a short repro: why, and how to
    generate its full harness. Run, it prints that and exits 2 (neither 1, the
    bug stands, nor 0, fixed)."""
    return (f'"""{doc_text(f"shapefuzz {sig.key}: {sig.text}")}\n\n'
            f"No short repro: {doc_text(str(why).rstrip('.'))}.\n\n"
            "The full judging harness, a standalone script that imports only torch and exits 1 while\n"
            "the bug stands, is generated from this entry's program.json (ENTRY: this directory):\n\n"
            f"    {HARNESS_COMMAND}\n"
            '"""\nimport sys\n\nprint(__doc__, file=sys.stderr)\nsys.exit(2)\n')


def entry_scripts(program: Program, verdict: Verdict, sig: Signature, device: str | None = None) -> tuple[dict, dict]:
    """({file name: text}, meta updates) of an entry's scripts: repro.py, the short
    repro (fuzz/program/short_repro.py) where the finding has one, else the
    harness (loading.harness_is_repro) or harness_note. meta: "repro_error" (None to
    drop it) and "short_repro": the short form's code lines, or why there is
    none; its standalone check (repro_files.check_repro) is not made here. `device`: the short repro's
    device where it differs from the program's (`repro_device`)."""
    from fuzz.program.short_repro import code_lines, short_repro_source, supported

    harness, error = entry_repro(program, sig)
    short = why = None
    if error is None:
        try:
            why = supported(program, verdict)
            short = None if why else short_repro_source(program, verdict, f"shapefuzz {sig.key}: {sig.text}",
                                                          device=device)
        except Exception as e:  # noqa: BLE001 - the harness still serves
            why = f"the short form failed to generate ({type(e).__name__}: {e})"
    info = {"program": program_digest(program)}
    info.update({"lines": code_lines(short), "script": _digest(short), "checked": None} if short
                else {"full_harness": why or error})
    if short:
        repro = short
    elif error or harness_is_repro(program):
        repro = harness  # the stub of a failed codegen, or a harness kept as the repro
    else:
        repro = harness_note(sig, why)
    return {"repro.py": repro}, {"repro_error": error, "short_repro": info}


def settled_scripts(program, verdict: Verdict, sig: Signature, meta: dict,
                    keep_check: bool = True, device: str | None = None) -> tuple[dict, dict, bool]:
    """entry_scripts for an entry whose meta.json is `meta`, and whether its
    repro.py is a short form. keep_check: the very same short form keeps its
    last standalone check, and one that did not fail gives way to the note."""
    scripts, updates = entry_scripts(program, verdict, sig, device)
    short = "lines" in updates["short_repro"]
    old = meta.get("short_repro")
    old = old if isinstance(old, dict) else {}
    if keep_check and short and old.get("checked") and old.get("script") == updates["short_repro"]["script"]:
        updates.pop("short_repro")  # the very same short form: its check stands
        if not old.get("reproduces"):
            why = old.get("full_harness") or "the short form did not fail as the finding did"
            scripts["repro.py"], short = harness_note(sig, why), False
    return scripts, updates, short


def repro_device(program, ablation: dict | None) -> str | None:
    """"cpu" for a CUDA finding whose triage reproduced it with device="cpu" (a maintainer runs a CPU repro
    anywhere), else None: the program's own device."""
    rows = (ablation or {}).get("rows") or []
    cpu = any(isinstance(r, dict) and r.get("axis") == "device" and (r.get("changes") or {}).get("device") == "cpu"
              and r.get("status") == "reproduces" for r in rows)
    return "cpu" if cpu and isinstance(program, Program) and program.device_type() == "cuda" else None


def entry_repro_device(entry_dir, program) -> str | None:
    """"cpu" or None (the program's own device) for an entry's short repro: where `shapefuzz versions` ran
    the CUDA program's CPU twin (meta.json "versions"."cpu"), whether the twin failed as found decides;
    else the triage's device row (ablation.json, `repro_device`)."""
    from fuzz.findings.store.corpus_files import CorpusFileError, read  # the capped loader: both files are data

    cuda = isinstance(program, Program) and program.device_type() == "cuda"
    try:
        versions = read(Path(entry_dir) / "meta.json").get("versions")
    except CorpusFileError:
        versions = None
    twin = versions.get("cpu") if isinstance(versions, dict) else None
    if isinstance(twin, dict) and "reproduces" in twin:
        return "cpu" if cuda and twin["reproduces"] is True else None
    try:
        doc = read(Path(entry_dir) / "ablation.json")
    except CorpusFileError:
        return None
    return repro_device(program, doc) if isinstance(doc, dict) else None

def _seen_with(d: Path, program) -> dict:
    """The dtypes, ops and devices of every program an entry holds (its
    representative and each variant as found): the variants one bug was seen with."""
    from fuzz.findings.store.corpus_files import read_program_json

    programs = [program]
    for path in sorted((d / "variants").glob("*/program.json")):
        try:  # size-capped, never through a symlink (CorpusFileError is a ValueError)
            programs.append(load_program(read_program_json(path)))
        except (OSError, ValueError):
            continue
    dtypes, ops, devices = set(), set(), set()
    for p in programs:
        if isinstance(p, Program):
            dtypes |= {x.dtype for x in p.inputs}
            ops |= {c.op for c in p.ops}
            devices.add(p.settings.device)
        else:  # a torch_xla step program
            dtypes.add(p.dtype)
            ops |= {s.op for _, s in p.steps()}
            devices.add("xla")
    return {"dtypes": sorted(dtypes), "ops": sorted(ops), "devices": sorted(devices), "programs": len(programs)}


def program_digest(program) -> str:
    return _digest(program.to_json())


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _apply_meta(meta: dict, updates: dict) -> dict:
    for k, v in updates.items():
        if v is None:
            meta.pop(k, None)
        else:
            meta[k] = v
    return meta


def program_stamp(program) -> str:
    """A report's last line: which program it describes (replay compares it with the entry's)."""
    return f"\n<!-- program {program_digest(program)} -->\n"


def stamped_program(report_text: str) -> str | None:
    m = re.search(r"<!-- program ([0-9a-f]{12}) -->\s*$", report_text)
    return m.group(1) if m else None
