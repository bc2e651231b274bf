"""The corpus: one self-contained directory per distinct signature.

    corpus/<key>/program.json    the (shrunk) program
                 verdict.json    what happened, with its numbers
                 signature.json  key + human-readable bucket text
                 env.json        torch / triton / torch_xla / CUDA / GPU / Python / OS
                 meta.json       first_seen, last_seen (UTC ISO), hits; "shrink": the figures of a shrink
                 repro.py        standalone script (imports only torch; torch_xla for XLA entries)
                 original_program.json  the program as found, once a shrink replaced it (update_shrunk)

Several workers and campaigns may write one corpus at once, so every write is
atomic (fuzz/files.py): files go to a temp file in the same directory, are
fsynced, then os.replace'd; a new entry is built complete in a hidden temp
directory and os.rename'd into place, which fails if another process got
there first, and then the loser only counts a hit. Readers never see a
half-written entry. Updates of an existing entry (hits, shrinks) hold its
.lock.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from fuzz.files import dumps as _dumps
from fuzz.files import fsync_dir as _fsync_dir  # a module name: tests make it fail
from fuzz.files import write_atomic as _write_atomic
from fuzz.files import write_synced as _write
from fuzz.program.ir import Program, ProgramError
from fuzz.program.loading import load_program, repro_source
from fuzz.findings.signature import Signature
from fuzz.judge.verdict import Verdict

FILES = ("program.json", "verdict.json", "signature.json", "env.json", "meta.json", "repro.py")
_LOCK = ".lock"


class CorpusError(Exception):
    """An entry that cannot be read back: missing file, bad JSON, hand edit gone wrong."""

    def __init__(self, path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


@dataclass
class Entry:
    path: Path
    signature: Signature
    program: Program  # or a torch_xla StepProgram (fuzz/program/loading.py)
    verdict: Verdict
    env: dict
    meta: dict

    @property
    def key(self) -> str:
        return self.signature.key

    @property
    def hits(self) -> int:
        return self.meta["hits"]


# -- environment --------------------------------------------------------------

def _dist_version(*names: str) -> str | None:
    from importlib import metadata
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _gpu_name(torch) -> str | None:
    # Asking torch initialises CUDA (a context, GPU memory) in whatever process
    # records; nvidia-smi does not. Use torch only if CUDA is up already.
    if torch.cuda.is_initialized():
        return torch.cuda.get_device_name()
    dev = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip() or "0"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", dev],
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return torch.cuda.get_device_name(0)


@functools.lru_cache(maxsize=1)
def capture_env() -> dict:
    """The environment a finding was made in. torch_xla and triton are read
    from package metadata, never imported (importing torch_xla starts a runtime)."""
    env = {"python": platform.python_version(), "os": platform.platform(), "machine": platform.machine()}
    try:
        import torch
    except ImportError:
        torch = None
    env["torch"] = torch.__version__ if torch else None
    env["torch_git"] = getattr(getattr(torch, "version", None), "git_version", None)
    env["cuda"] = getattr(getattr(torch, "version", None), "cuda", None)
    env["hip"] = getattr(getattr(torch, "version", None), "hip", None)
    env["triton"] = _dist_version("triton", "pytorch-triton", "pytorch-triton-rocm")
    xla = sys.modules.get("torch_xla")
    env["torch_xla"] = getattr(xla, "__version__", None) or _dist_version("torch_xla", "torch-xla")
    env["gpu"] = _gpu_name(torch) if torch is not None and torch.cuda.is_available() else None
    return env


# -- files ----------------------------------------------------------------------

def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _repro(program: Program, sig: Signature) -> tuple[str, str | None]:
    """The repro script, or a stub that says why there is none: a codegen bug
    must not cost us the finding."""
    title = f"shapefuzz {sig.key}: {sig.text}".replace("\\", "/").replace('"""', "'''")
    try:
        return repro_source(program, title), None
    except Exception as e:  # noqa: BLE001 - any codegen failure
        why = f"{type(e).__name__}: {e}"
        stub = (f'"""{title}\n\nNo repro: code generation failed: {why}\n"""\nimport sys\n\n'
                f"sys.exit({('no repro: ' + why)!r})\n")
        return stub, why.replace("\\", "/").replace('"""', "'''")


# -- the corpus ---------------------------------------------------------------

class Corpus:
    def __init__(self, root="corpus"):
        self.root = Path(root)
        self.errors: list[CorpusError] = []  # filled by entries()

    def path_of(self, key: str) -> Path:
        return self.root / key

    def record(self, program: Program, verdict: Verdict, signature: Signature,
               env: dict | None = None) -> tuple[Path, bool]:
        """Save a finding; returns (entry dir, is_new). A signature seen before
        only counts a hit: the first program recorded for a bug is kept."""
        self.root.mkdir(parents=True, exist_ok=True)
        entry = self.path_of(signature.key)
        if entry.is_dir():
            self._hit(entry)
            return entry, False
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{signature.key}-", dir=self.root))
        try:
            os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; the entry is for everyone to read
            now = _now()
            repro, repro_error = _repro(program, signature)
            meta = {"first_seen": now, "last_seen": now, "hits": 1}
            if repro_error:
                meta["repro_error"] = repro_error
            _write(tmp / "program.json", program.to_json(indent=2) + "\n")
            _write(tmp / "verdict.json", _dumps(verdict.to_dict()))
            _write(tmp / "signature.json", _dumps(signature.to_dict()))
            _write(tmp / "env.json", _dumps(env if env is not None else capture_env()))
            _write(tmp / "repro.py", repro)
            _write(tmp / "meta.json", _dumps(meta))
            _fsync_dir(tmp)
            try:
                os.rename(tmp, entry)
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
                self._hit(entry)  # another process created it between our check and rename
                return entry, False
            _fsync_dir(self.root)
            return entry, True
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _hit(self, entry: Path) -> None:
        # Hits are a read-modify-write of meta.json under the entry lock. An
        # append-only hit log would need no lock, but it grows with every hit
        # (hour-long campaigns hit one bug millions of times) and leaves
        # meta.json stale; the lock is held only for one tiny file.
        with _locked(entry):
            now = _now()
            try:
                meta = json.loads((entry / "meta.json").read_text())
                if not isinstance(meta, dict) or not isinstance(meta.get("hits"), int):
                    raise ValueError("bad meta")
            except (OSError, ValueError):
                meta = {"first_seen": now, "hits": 0}  # repair rather than lose the hit
            meta["hits"] += 1
            meta["last_seen"] = now
            _write_atomic(entry / "meta.json", _dumps(meta))

    def update_shrunk(self, entry_dir, program, verdict: Verdict, record: dict) -> Entry:
        """Replace an entry's program by a smaller one that reproduces its bug
        (a shrink): program.json, verdict.json and repro.py are rewritten, the
        first program is kept as original_program.json, and `record` (the
        shrink's figures) goes under meta.json's "shrink" with the time.
        signature.json stays: the entry keeps its key whatever the shrunk
        program's own signature text (a value finding may lose op families).

        Each file is replaced atomically and the whole update runs under the
        entry lock, so it never interleaves with a hit or another update.
        Returns the entry as read back."""
        d = Path(entry_dir)
        with _locked(d):
            entry = self.load(d)
            if not (d / "original_program.json").exists():
                _write_atomic(d / "original_program.json", entry.program.to_json(indent=2) + "\n")
            _write_atomic(d / "program.json", program.to_json(indent=2) + "\n")
            _write_atomic(d / "verdict.json", _dumps(verdict.to_dict()))
            repro, repro_error = _repro(program, entry.signature)
            _write_atomic(d / "repro.py", repro)
            meta = dict(entry.meta)
            meta["shrink"] = {**record, "at": _now()}
            if repro_error:
                meta["repro_error"] = repro_error
            else:
                meta.pop("repro_error", None)
            _write_atomic(d / "meta.json", _dumps(meta))
            return self.load(d)

    def entries(self) -> Iterator[Entry]:
        """Every readable entry, by key. Unreadable ones are skipped and
        collected in self.errors (reset when iteration starts)."""
        self.errors = []
        if not self.root.is_dir():
            return
        for d in sorted(self.root.iterdir()):
            if d.name.startswith(".") or not d.is_dir():
                continue  # temp dirs of records in flight, files like known_issues.json
            try:
                yield self.load(d)
            except CorpusError as e:
                self.errors.append(e)

    def load(self, entry_dir) -> Entry:
        d = Path(entry_dir)
        if not d.is_dir():
            raise CorpusError(d, "not a corpus entry directory")
        missing = [f for f in FILES if not (d / f).is_file()]
        if len(missing) == len(FILES):
            raise CorpusError(d, f"not a corpus entry (it has none of {', '.join(FILES)})")
        if missing:
            raise CorpusError(d, f"missing {', '.join(missing)}")
        data = {}
        for name in FILES[:-1]:
            try:
                data[name] = json.loads((d / name).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                raise CorpusError(d, f"{name}: not valid JSON ({e})") from None
            if not isinstance(data[name], dict):
                raise CorpusError(d, f"{name}: must be a JSON object")
        sig = _load_signature(d, data["signature.json"])
        try:
            program = load_program(data["program.json"])
        except ProgramError as e:
            raise CorpusError(d, f"program.json: {e}") from None
        try:
            verdict = Verdict.from_dict(data["verdict.json"])
        except (KeyError, TypeError, ValueError) as e:
            raise CorpusError(d, f"verdict.json: {type(e).__name__}: {e}") from None
        meta = data["meta.json"]
        hits = meta.get("hits")
        if not isinstance(hits, int) or isinstance(hits, bool) or hits < 1:
            raise CorpusError(d, f"meta.json: hits must be a positive int, got {hits!r}")
        for k in ("first_seen", "last_seen"):
            try:
                datetime.fromisoformat(meta[k])
            except (KeyError, TypeError, ValueError):
                raise CorpusError(d, f"meta.json: {k} must be an ISO time, got {meta.get(k)!r}") from None
        return Entry(path=d, signature=sig, program=program, verdict=verdict, env=data["env.json"], meta=meta)


@contextmanager
def _locked(entry: Path):
    """An exclusive flock on entry/.lock: every read-modify-write of an entry's files."""
    with open(entry / _LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _load_signature(d: Path, s: dict) -> Signature:
    if not isinstance(s.get("key"), str) or not isinstance(s.get("text"), str):
        raise CorpusError(d, "signature.json: needs string fields 'key' and 'text'")
    sig = Signature.from_dict(s)
    if sig.key != d.name:
        raise CorpusError(d, f"signature.json: key {sig.key!r} does not match the directory name")
    if Signature.of_text(sig.text).key != sig.key:
        raise CorpusError(d, "signature.json: text does not hash to key (edited by hand?)")
    return sig
