"""The kinds of program shapefuzz judges, each implementing one protocol
(fuzz/kinds/base.py ProgramKind) once:

- compiled (compiled.py): one function compiled by torch.compile and called
  over a size schedule (Inductor, aot_eager, openxla, ...);
- steps (steps.py): torch_xla lazy-tensor step sequences with sync points.

Replay, the pytest plugin, the campaign and the CLI ask the kind of a
program (kind_of) for whatever differs; none of them asks which kind it is.
Loading a program from JSON is fuzz/program/loading.py (the corpus needs it
and nothing above it). Imports no torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fuzz.kinds.base import ProgramKind
from fuzz.kinds.compiled import CompiledKind
from fuzz.kinds.steps import StepKind
from fuzz.program.loading import kind_name, load_program, repro_source, unwrap_case

KINDS: dict[str, ProgramKind] = {k.name: k for k in (CompiledKind(), StepKind())}

__all__ = ["KINDS", "ProgramKind", "kind_of", "kind_of_file", "load_program", "named", "render_report",
           "report_entry", "repro_source", "unwrap_case"]


def named(name: str) -> ProgramKind:
    return KINDS[name]


def kind_of(p: Any) -> ProgramKind:
    """The kind of a program, or of its JSON object."""
    return KINDS[kind_name(p)]


def kind_of_file(path) -> ProgramKind | None:
    """The kind of a case file or corpus entry directory; None when it cannot
    be read (the command's own loading reports why)."""
    from fuzz.datafile import DataFileError, read_json
    from fuzz.program.schema import MAX_PROGRAM_BYTES

    path = Path(path)
    try:  # size-capped before it is parsed: a huge file is refused by the command's own loading
        d = read_json(path / "program.json" if path.is_dir() else path, MAX_PROGRAM_BYTES)
    except DataFileError:
        return None
    d = unwrap_case(d)
    return kind_of(d) if isinstance(d, dict) else None


def render_report(entry) -> str:
    """Issue-ready markdown for a corpus Entry (or an entry directory), in the
    layout of the upstream project its kind reports to."""
    if isinstance(entry, (str, Path)):
        from fuzz.findings.store.corpus import Corpus

        entry = Corpus(Path(entry).parent).load(entry)
    return kind_of(entry.program).render_report(entry)


def report_entry(entry_dir) -> str:
    """Render the entry's report and write it as report.md (atomically); returns it."""
    from fuzz.files import write_atomic
    from fuzz.findings.store.corpus_files import entry_inside

    text = render_report(entry_dir)
    write_atomic(entry_inside(entry_dir) / "report.md", text)
    return text
