"""An entry's scripts: repro.py, the short repro where its finding has one
(fuzz/program/short_repro.py), else the full harness; harness.py, the full
judging harness replay regenerates; and what meta.json says of them. Also the
digests that tie a script or report to the program it was made from, and the
variants an entry was seen with."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fuzz.findings.signature import Signature
from fuzz.judge.verdict import Verdict
from fuzz.program.ir import Program
from fuzz.program.loading import load_program, repro_source
from fuzz.program.quoting import doc_text


def entry_repro(program: Program, sig: Signature) -> tuple[str, str | None]:
    """The full harness script, or a stub that says why there is none: a codegen
    bug must not cost us the finding."""
    title = f"shapefuzz {sig.key}: {sig.text}"
    try:
        return repro_source(program, title), None
    except Exception as e:  # noqa: BLE001 - any codegen failure
        why = f"{type(e).__name__}: {e}"
        stub = (f'"""{doc_text(title)}\n\nNo repro: code generation failed: {doc_text(why)}\n"""\nimport sys\n\n'
                f"sys.exit({('no repro: ' + why)!r})\n")
        return stub, why


def entry_scripts(program: Program, verdict: Verdict, sig: Signature) -> tuple[dict, dict]:
    """({file name: text}, meta updates) of an entry's scripts: harness.py, the full
    judging harness replay runs; repro.py, the short repro (fuzz/program/short_repro.py)
    where the finding has one, else the harness again. meta: "repro_error" (None
    to drop it) and "short_repro": the short form's code lines, or why there is
    none; its standalone check (`check_entry_repro`) is not made here."""
    from fuzz.program.short_repro import code_lines, short_repro_source, supported

    harness, error = entry_repro(program, sig)
    short = why = None
    if error is None:
        try:
            why = supported(program, verdict)
            short = None if why else short_repro_source(program, verdict, f"shapefuzz {sig.key}: {sig.text}")
        except Exception as e:  # noqa: BLE001 - the harness still serves
            why = f"the short form failed to generate ({type(e).__name__}: {e})"
    info = {"program": program_digest(program)}
    info.update({"lines": code_lines(short), "script": _digest(short), "checked": None} if short
                else {"full_harness": why or error})
    return {"repro.py": short or harness, "harness.py": harness}, {"repro_error": error, "short_repro": info}


def _seen_with(d: Path, program) -> dict:
    """The dtypes, ops and devices of every program an entry holds (its
    representative and each variant as found): the variants one bug was seen with."""
    from fuzz.findings.corpus_files import read_program_json

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
