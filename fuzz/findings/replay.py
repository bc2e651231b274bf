"""Replay a corpus against the installed torch: which bugs still stand?

A corpus comes from other people, so replay runs none of its files as code.
For every entry it validates program.json (fuzz/program/schema.json), checks
that the stored repro.py is a whole script (not empty, truncated or
unparsable: that entry is an ERROR, it cannot be filed), then runs the
harness this program generates (the same code, written afresh to a scratch
dir) in a subprocess, and judges the program:
`python -m fuzz check ENTRY/program.json --json` in a subprocess. Every
answer rests on that judged run: the same signature (computed against the
entry's program) is STILL-FAILING, another finding CHANGED, a pass FIXED (only
when the harness passed too and printed its OK line). An entry that cannot be
read, whose harness dies (a traceback instead of a verdict, a missing module)
or runs past the time limit, or whose program cannot be judged, is an ERROR,
with the reason. A stored repro.py that differs from what its program
generates now is noted in the row (`shapefuzz repro ENTRY` writes it anew),
and so is a harness.py an older entry stored (`shapefuzz dedupe` removes
it). An entry whose program names a module:attr backend is SKIPPED unless
that module is allowed (--allow-backend MODULE).

A torch_xla entry (a step program) replayed by a Python without torch_xla,
or a CUDA entry on a machine without a CUDA device, is SKIPPED, with the
reason; it does not fail the run. So is an entry whose repro.py exits 77
(it found its device or stack missing).

Crash and hang findings are matched by what they do: an entry recorded as a
crash whose repro and re-judge die by the same signal, or recorded as a hang
whose re-judge runs past the time limit, is still failing (their frames come
from a different process and would not match).

Entries are replayed `jobs` at a time (default: one per usable CPU, each
subprocess with one Inductor compile thread and its share of OMP threads,
fuzz/campaign/sizing.py), and reported to `on_row` as they finish.
Subprocesses run in their own session with a fresh Inductor cache (shared by
one replay), and are killed with their whole process group on timeout.

Exit status of `shapefuzz replay` (for CI):
  0  every entry is still failing, fixed or skipped
  1  some entry changed or is an error; with --fail-on-fixed, also when
     some entry is fixed (time to close its issue and drop the entry)
  2  the corpus directory does not exist or holds no entry
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from fuzz.judge.backends import not_allowed
from fuzz.kinds import kind_of
from fuzz.findings.signature import Signature, in_bucket, minimal_signature, signature
from fuzz.judge.isolated import EXIT_SKIP, JudgeError, child_env, judge_in_subprocess, run_command, tail
from fuzz.judge.verdict import Outcome, Verdict

STILL_FAILING, FIXED, CHANGED, ERROR, SKIPPED = "still-failing", "fixed", "changed", "error", "skipped"
STATUSES = (STILL_FAILING, FIXED, CHANGED, ERROR, SKIPPED)  # skipped: needs torch_xla or CUDA, not here
EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2
FAIL_LINE = "FAIL: compiled and eager disagree"
FAIL_LINES = (FAIL_LINE, "FAIL: XLA and eager disagree")  # repro.py of a compiled program, of a torch_xla one
OK_LINE = "OK: compiled and eager agree"
OK_LINES = (OK_LINE, "OK: XLA and eager agree")
_TAIL = 20
_ROOT = Path(__file__).resolve().parent.parent  # holds the fuzz package


class ReplayError(JudgeError):
    """An entry could not be replayed; the message is the reason."""


@dataclass
class ReplayRow:
    key: str  # the entry directory's name (its signature key when intact)
    path: str
    status: str  # one of STATUSES
    signature: str = ""  # the entry's signature text ("" when unreadable)
    new_signature: str = ""  # key of the signature now (when re-judged)
    new_signature_text: str = ""
    outcome: str = ""  # outcome of the re-judged program
    reason: str = ""  # why error / what changed / notes
    repro_rc: int | None = None  # exit status of repro.py (None: not run or timed out)
    known: str = ""  # the known issue matching the entry: "URL (status)"
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


# -- one entry ----------------------------------------------------------------------

def _known_issues(root: Path):
    """The corpus's known-issues rules (None when it has none); KnownIssuesError when the file is malformed:
    every command refuses it alike, as `run` does, rather than showing every known bug as new."""
    path = root / "known_issues.json"
    if not os.path.lexists(path):
        return None
    from fuzz.findings.status.known import KnownIssues

    return KnownIssues.load(path)


def replay_entry(entry_dir, *, timeout: float = 600.0, python: str | None = None, cache_dir: str | None = None,
                 known=None, env: dict | None = None) -> ReplayRow:
    """Replay one corpus entry; never raises for a bad entry (an ERROR row)."""
    from fuzz.findings.store.corpus import CorpusError

    d = Path(entry_dir).absolute()  # the judge runs in another cwd
    row = ReplayRow(key=d.name, path=str(entry_dir), status=ERROR)
    start = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="shapefuzz-replay-") as work:
            _replay_into(row, d, Path(work), timeout=timeout, python=python, cache_dir=cache_dir, known=known,
                         env=env)
    except CorpusError as e:
        row.status, row.reason = ERROR, f"corrupt entry: {e.reason}"
    except JudgeError as e:  # ReplayError, or the fresh-process judge failing
        row.status, row.reason = ERROR, str(e)
    except OSError as e:
        row.status, row.reason = ERROR, f"cannot run: {e}"
    row.seconds = time.monotonic() - start
    return row


def stored_repro_problem(path: Path) -> str | None:
    """Why an entry's stored repro.py cannot be filed (missing, over its size cap, empty, truncated or not
    Python), or None. It is read through the one loader and compiled, never run."""
    from fuzz.findings.store.corpus_files import CorpusFileError, read_stored_text

    if not path.exists():
        return "repro.py cannot be read: it is missing"
    try:
        text = read_stored_text(path, "repro.py")
    except CorpusFileError as e:
        return f"repro.py cannot be read: {str(e).removeprefix(f'{path}: ')}"
    if not text.strip():
        return "repro.py is empty"
    try:  # compile(), not ast.parse(): entries are checked in threads, and 3.11's ast module is not thread-safe
        code = compile(text, "repro.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        return f"repro.py is truncated or not Python: {e}"
    except (RecursionError, MemoryError):  # an expression nested past what the compiler takes
        return "repro.py is not Python this compiler takes (an expression nested too deeply)"
    if not set(code.co_names) - {"__doc__"}:
        return "repro.py holds no code (a docstring or comments alone)"
    return None


def _replay_into(row: ReplayRow, d: Path, work: Path, *, timeout, python, cache_dir, known, env) -> None:
    from fuzz.findings.store.corpus import HARNESS, Corpus, entry_repro
    from fuzz.findings.store.corpus_files import read_stored_text
    from fuzz.findings.store.scripts import settled_scripts

    entry = Corpus(d.parent).load(d)
    row.signature = entry.signature.text
    rule = _known(known, entry)
    if rule is not None:
        row.known = f"{rule.url or 'rule ' + str(rule.index)} ({rule.status})"
    if entry.meta.get("repro_error"):
        raise ReplayError(f"no repro: {entry.meta['repro_error']}")
    problem = stored_repro_problem(d / "repro.py")
    if problem:
        raise ReplayError(problem)
    backend = getattr(entry.program.settings, "backend", "")
    if not_allowed(backend):
        row.status, row.reason = SKIPPED, not_allowed(backend)
        return
    missing = kind_of(entry.program).unavailable(entry.program) if python is None else None
    if missing:  # another Python (--python) may have what this one lacks
        row.status, row.reason = SKIPPED, missing
        return
    harness, _ = entry_repro(entry.program, entry.signature)
    scripts, _, _ = settled_scripts(entry.program, entry.verdict, entry.signature, entry.meta)
    stale = scripts["repro.py"] != read_stored_text(d / "repro.py")
    (work / "repro.py").write_text(harness)
    recorded = entry.verdict.outcome
    rc, out, err = run_command([python or sys.executable, "repro.py"], timeout=timeout, env=child_env(cache_dir, env),
                               cwd=work)
    row.repro_rc = rc
    if rc == EXIT_SKIP:  # the repro found its device or stack missing
        row.status, row.reason = SKIPPED, tail(err, 1) or tail(out, 1) or "repro.py exited 77 (skipped)"
        return
    if rc is None:
        if recorded is not Outcome.HANG:
            raise ReplayError(f"timeout: repro.py ran past {timeout:g} s")
    elif rc == 0 and not any(line in out for line in OK_LINES):
        raise ReplayError(f"the harness exited 0 without its verdict line: {tail(err, 6) or tail(out, 6)}")
    elif rc == 1 and not any(line in out for line in FAIL_LINES) or rc not in (0, 1) and not (
            rc < 0 and recorded is Outcome.CRASH):
        raise ReplayError(f"repro crashed (exit {rc}): {tail(err, 12) or tail(out, 12)}")
    v = judge_in_subprocess(d / "program.json", timeout=timeout, python=python, cache_dir=cache_dir, env=env)
    sig = signature(v, entry.program)
    row.outcome, row.new_signature, row.new_signature_text = v.outcome.value, sig.key, sig.text
    same, note = same_bug(entry, v)
    if rc == 0 and not v.is_finding:
        row.status, row.reason = FIXED, tail(out, 1)
        if rule is not None and rule.status == "open":
            row.reason = f"known issue still marked open: {row.known}"
    elif rc == 0:
        row.status, row.reason = ERROR, f"the harness passes but judging the program gives {v.summary()}"
    elif same:
        row.status, row.reason = STILL_FAILING, note
        if rule is not None and rule.status in ("fixed", "closed"):
            row.reason = f"known issue marked {rule.status} still reproduces: {row.known}"
    else:
        row.status, row.reason = CHANGED, f"now: {v.summary()}"
    notes = ["the stored repro.py is not what its program generates now (shapefuzz repro ENTRY rewrites "
             "it)"] if stale else []
    if (d / HARNESS).exists():
        notes.append(f"the entry stores a {HARNESS}, which is generated on demand now (shapefuzz dedupe CORPUS "
                     "removes it)")
    if (d / "report.md").is_file():
        from fuzz.findings.store.scripts import program_digest
        from fuzz.findings.store.scripts import stamped_program

        if stamped_program(read_stored_text(d / "report.md")) != program_digest(entry.program):
            notes.append("report.md describes another program (shapefuzz report ENTRY --write rewrites it)")
    row.reason = "; ".join(filter(None, [row.reason] + notes))
    _note_replay(d, row, this_torch=python is None)


def _note_replay(d: Path, row: ReplayRow, this_torch: bool) -> None:
    """The entry's meta.json "last_replay": status, when, under which torch (best effort: a
    read-only corpus is replayed all the same)."""
    from datetime import datetime, timezone

    from fuzz.findings.store.corpus import Corpus

    try:
        import torch

        Corpus(d.parent).set_meta(d, "last_replay", {
            "status": row.status, "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "torch": torch.__version__ if this_torch else "another Python's (--python)"})
    except Exception:  # noqa: BLE001 - a note, never a reason to fail the replay
        pass


def _known(known, entry):
    """The known-issues rule matching the entry: by its key, or by the
    provisional key of any program it holds (a rule names either)."""
    if known is None:
        return None
    sigs = [entry.signature] + [Signature(k, d.get("text", "")) for k, d in entry.variants.items() if k != entry.key]
    return next((r for r in (known.match(s, entry.verdict, entry.program) for s in sigs) if r is not None), None)


def same_bug(entry, v: Verdict) -> tuple[bool, str]:
    """Whether verdict `v` of the entry's program is the entry's bug, and a
    note when that was decided by outcome rather than signature: the same
    signature (computed against the entry's program); for a recorded hang,
    another hang; for a recorded crash, a crash by the same signal. A shrunk
    value finding may have fewer op families than its key (see in_bucket). A
    re-keyed entry is compared with its (shrunk) program's own signature, and
    by its minimal signature."""
    if v.is_finding:
        sig, bucket = signature(v, entry.program), entry.bucket
        if sig.key in (entry.key, bucket.key) or (entry.minimal and minimal_signature(v, entry.program).key == entry.key):
            return True, ""
        if in_bucket(sig.text, bucket.text):
            return True, "same bucket with a subset of the op families (shrunk)"
    recorded = entry.verdict.outcome
    if recorded is Outcome.HANG and v.outcome is Outcome.HANG:
        return True, "hangs again (hangs are compared by outcome only)"
    if recorded is Outcome.CRASH and v.outcome is Outcome.CRASH and v.exc_type == entry.verdict.exc_type:
        return True, f"crashes again with {v.exc_type} (crashes are compared by signal only)"
    return False, ""


# -- the corpus ----------------------------------------------------------------------

def entry_dirs(corpus_root) -> list[Path]:
    root = Path(corpus_root)
    from fuzz.findings.store.corpus import SET_ASIDE

    return [d for d in sorted(root.iterdir()) if d.is_dir() and not d.name.startswith(".") and d.name not in SET_ASIDE]


def replay(corpus_root, *, timeout: float = 600, jobs: int | None = None, python: str | None = None,
           on_row: Callable[[ReplayRow, int, int], None] | None = None) -> list[ReplayRow]:
    """Replay every entry of the corpus, `jobs` at a time (default: one per
    usable CPU); `timeout` bounds each subprocess. on_row(row, done, total)
    is called in this thread as each entry finishes; the rows are returned
    sorted by key. Raises FileNotFoundError when the corpus directory does
    not exist."""
    from fuzz.campaign.sizing import size_pool

    root = Path(corpus_root)
    if not root.is_dir():
        raise FileNotFoundError(f"no corpus directory {str(root)!r}")
    if (root / "program.json").is_file():  # one entry, not a corpus: replay just it
        dirs, known = [root], _known_issues(root.parent)
    else:
        dirs, known = entry_dirs(root), _known_issues(root)
    if not dirs:
        raise FileNotFoundError(f"{str(root)!r} holds no corpus entry (an entry is a directory with program.json)")
    sizing = size_pool(jobs)
    cache_dir = tempfile.mkdtemp(prefix="replay-inductor-cache-")
    rows: dict[Path, ReplayRow] = {}

    def one(d):
        return replay_entry(d, timeout=timeout, python=python, cache_dir=cache_dir, known=known, env=sizing.env)

    def done(d, row):
        rows[d] = row
        if on_row is not None:
            on_row(row, len(rows), len(dirs))

    try:
        if sizing.workers <= 1 or len(dirs) <= 1:
            for d in dirs:
                done(d, one(d))
        else:
            with ThreadPoolExecutor(max_workers=sizing.workers) as pool:
                futures = {pool.submit(one, d): d for d in dirs}
                for f in as_completed(futures):
                    done(futures[f], f.result())
        return [rows[d] for d in dirs]
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


def row_line(row: ReplayRow, done: int | None = None, total: int | None = None) -> str:
    """One plain line for an entry as it finishes: [done/total] KEY STATUS  what (seconds)."""
    what = " ".join((row.reason or row.signature or "").split())
    if row.status == CHANGED and row.new_signature_text:
        what = f"now {row.new_signature_text}"
    if len(what) > 160:
        what = what[:157] + "..."
    at = f"[{done}/{total}] " if done is not None else ""
    return f"{at}{row.key}  {row.status}  {what}  ({row.seconds:.1f} s)".rstrip()


def counts(rows: list[ReplayRow]) -> dict:
    return {s: sum(r.status == s for r in rows) for s in STATUSES}


def exit_status(rows: list[ReplayRow], *, fail_on_fixed: bool = False) -> int:
    """0 when every entry is still failing or fixed; 1 when any changed or is
    an error (or, with fail_on_fixed, is fixed)."""
    bad = {CHANGED, ERROR} | ({FIXED} if fail_on_fixed else set())
    return EXIT_FAIL if any(r.status in bad for r in rows) else EXIT_OK


STYLE = {STILL_FAILING: "yellow", FIXED: "green", CHANGED: "magenta", ERROR: "red", SKIPPED: "dim"}


def print_table(rows: list[ReplayRow], *, title: str = "", file=None) -> None:
    from rich.console import Console
    from rich.table import Table

    from fuzz.terminal import markup, raw

    console = Console(file=raw(file or sys.stdout), soft_wrap=False)
    table = Table(title=markup(title) or None, show_lines=False)
    table.add_column("entry", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("signature", overflow="fold", max_width=60)
    table.add_column("detail", overflow="fold", max_width=70)
    for r in rows:
        detail = r.reason
        if r.status == CHANGED and r.new_signature_text:
            detail = f"{r.new_signature_text}\n{r.reason}"
        if r.known and r.known not in detail:
            detail = f"{detail}\nknown: {r.known}".strip()
        table.add_row(markup(r.key), f"[{STYLE[r.status]}]{r.status}[/]", markup(r.signature), markup(detail),
                      end_section=False)
    console.print(table)
    c = counts(rows)
    console.print(f"{len(rows)} entries: " + ", ".join(f"{n} {s}" for s, n in c.items()))
