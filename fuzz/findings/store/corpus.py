"""The corpus: one self-contained directory per distinct bug.

    corpus/<key>/program.json    the (shrunk) program
                 verdict.json    what happened, with its numbers
                 signature.json  key + human-readable bucket text ("minimal": true once re-keyed)
                 env.json        torch / triton / torch_xla / CUDA / GPU / Python / OS
                 meta.json       first_seen, last_seen (UTC ISO), hits; "shrink": the figures of a shrink;
                                 "variants" (re-keyed entries): provisional key -> text, hits, first/last seen
                 repro.py        the short repro (fuzz/program/short_repro.py); where the finding has none, or it
                                 did not fail standalone (meta "short_repro" says why), a note on how to generate
                                 the full harness; torch_xla entries: their harness (fuzz/findings/store/scripts.py)
                 report.md, ablation.json, sanitizer.txt   once made
                 original_program.json, original_verdict.json  as found, once a shrink replaced them
                                 (of the representative, in a merged entry)
                 variants/<provisional key>/program.json, verdict.json   each program as found (re-keyed)
    corpus/.index.json           provisional key -> entry key, for the keys re-keyed entries absorbed

An entry is made under the provisional signature of its finding
(fuzz/findings/signature.py). Once shrunk, `rekey` moves it to its minimal
signature and merges it with an entry already there: hits summed, first/last
seen combined, every program as found kept under variants/, the smallest
program the representative. A later finding with any of the absorbed
provisional keys then counts a hit on the merged entry (the index).
Entries without "variants" or "minimal" (older corpora) read as before.

The full judging harness is data's product, not data: generated from the
validated program whenever a command needs it, never stored and never read
back. Entries made before kept it as harness.py: `shapefuzz dedupe`,
`sanitize` and `repro ENTRY` remove it (fuzz/findings/store/repro_files.py, which
also rewrites and checks repro.py).

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
from typing import Callable, Iterator

from fuzz.files import dumps as _dumps
from fuzz.files import fsync_dir as _fsync_dir  # a module name: tests make it fail
from fuzz.files import write_atomic as _write_atomic
from fuzz.files import write_synced as _write
from fuzz.findings.store.corpus_files import (KNOWN, SET_ASIDE, UNCONFIRMED, CorpusFileError,  # noqa: F401
                                        OutsideCorpus, entry_inside, inside, is_entry_dir, read,
                                        read_program_json)  # the set-aside dirs' names: re-exported
from fuzz.program.ir import Program, ProgramError
from fuzz.program.loading import load_program
from fuzz.findings.signature import Signature, signature
from fuzz.judge.verdict import Verdict
from fuzz.findings.store.scripts import (_apply_meta, _seen_with, entry_repro, entry_scripts,  # noqa: F401
                                   program_digest, settled_scripts)  # entry_repro, program_digest: re-exported

FILES = ("program.json", "verdict.json", "signature.json", "env.json", "meta.json", "repro.py")
HARNESS = "harness.py"  # stored by older entries; generated on demand now, and removed where found
INDEX = ".index.json"  # hidden: every other name but known_issues.json and SET_ASIDE in a corpus is an entry
_ORIGINALS = ("original_program.json", "original_verdict.json")  # the representative as found
_LOCK = ".lock"
_INDEX_LOCK = ".index.lock"


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

    @property
    def minimal(self) -> bool:
        """Re-keyed by its minimal signature (shrunk, then merged)."""
        return self.signature.minimal

    @property
    def shrunk(self) -> bool:
        return isinstance(self.meta.get("shrink"), dict)

    @property
    def variants(self) -> dict:
        """provisional key -> {text, hits, first_seen, last_seen}: the programs
        as found that this entry holds (one, its own, until it is re-keyed)."""
        v = self.meta.get("variants")
        if isinstance(v, dict):
            return v
        return {self.key: {"text": self.signature.text, "hits": self.hits, "first_seen": self.meta["first_seen"],
                           "last_seen": self.meta["last_seen"]}}

    @property
    def bucket(self) -> Signature:
        """The provisional signature its program is pinned to when it is judged
        again (shrink, triage, replay): its own, or for a re-keyed entry that
        of its representative program."""
        return signature(self.verdict, self.program) if self.minimal else self.signature


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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# -- the corpus ---------------------------------------------------------------

class Corpus:
    def __init__(self, root="corpus"):
        self.root = Path(root)
        self.errors: list[CorpusError] = []  # filled by entries()
        self.uncounted: dict[Path, CorpusError] = {}  # entries whose unreadable meta.json a hit left as it was
        self._index_cache = None

    def path_of(self, key: str) -> Path:
        return self.root / key

    def resolve(self, key: str) -> Path | None:
        """The entry that holds provisional or entry key `key` now: its own
        directory, else the one the index names; None when there is none."""
        d = self.path_of(key)
        if is_entry_dir(d):
            return d
        target = self.index().get(key)  # an entry key by the index's schema, never a path
        if target and is_entry_dir(self.path_of(target)):
            return self.path_of(target)
        return None

    def index(self) -> dict:
        """provisional key -> entry key (.index.json; {} when absent). CorpusError when it is not an index
        (never rewritten then: the keys it holds would be lost)."""
        path = self.root / INDEX
        try:
            stat = path.stat()
        except OSError:
            return {}
        if self._index_cache and self._index_cache[0] == (stat.st_mtime_ns, stat.st_size):
            return self._index_cache[1]
        try:
            keys = read(path)["keys"]
        except CorpusFileError as e:
            raise CorpusError(path, str(e).removeprefix(f"{path}: ") + "; fix or remove it") from None
        self._index_cache = ((stat.st_mtime_ns, stat.st_size), keys)
        return keys

    @staticmethod
    def origin(entry_dir) -> str | None:
        """The campaign state dir that made the entry (meta.json "origin"), if it says."""
        try:
            return read(Path(entry_dir) / "meta.json").get("origin")
        except CorpusFileError:
            return None

    def _update_index(self, updates: dict) -> None:
        """Point each key of `updates` at its entry key (and whatever pointed at
        a key that moved, at its new place); under the corpus lock."""
        with _locked(self.root, _INDEX_LOCK):
            keys = dict(self.index())
            for k, v in list(keys.items()):
                keys[k] = updates.get(v, v)
            keys.update(updates)
            keys = {k: v for k, v in keys.items() if k != v}
            _write_atomic(self.root / INDEX, _dumps({"version": 1, "keys": keys}))
        self._index_cache = None

    def record(self, program: Program, verdict: Verdict, signature: Signature,
               env: dict | None = None, origin: str | None = None) -> tuple[Path, bool]:
        """Save a finding; returns (entry dir, is_new). A signature seen before
        (an entry's own, or one a re-keyed entry absorbed) only counts a hit:
        the first program recorded for a bug is kept. `origin` (a campaign's
        state dir) is kept in meta.json."""
        self.root.mkdir(parents=True, exist_ok=True)
        held = self.resolve(signature.key)
        if held is not None:
            return self._hit(held, signature.key), False
        entry = self.path_of(signature.key)
        if os.path.islink(entry):
            raise OutsideCorpus(f"{entry}: is a symlink; a corpus entry is a real directory, nothing is written there")
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{signature.key}-", dir=self.root))
        try:
            os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; the entry is for everyone to read
            now = _now()
            scripts, updates = entry_scripts(program, verdict, signature)
            meta = _apply_meta({"first_seen": now, "last_seen": now, "hits": 1}, updates)
            if origin:
                meta["origin"] = origin
            _write(tmp / "program.json", program.to_json(indent=2) + "\n")
            _write(tmp / "verdict.json", _dumps(verdict.to_dict()))
            _write(tmp / "signature.json", _dumps(signature.to_dict()))
            _write(tmp / "env.json", _dumps(env if env is not None else capture_env()))
            for name, text in scripts.items():
                _write(tmp / name, text)
            _write(tmp / "meta.json", _dumps(meta))
            _fsync_dir(tmp)
            try:
                os.rename(tmp, entry)
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
                # another process created it between our check and rename
                return self._hit(entry, signature.key), False
            _fsync_dir(self.root)
            return entry, True
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _hit(self, entry: Path, key: str | None = None) -> Path:
        """Count a hit (of provisional key `key`) on `entry`; returns the entry
        that got it: one merged away meanwhile passes it on to where it went."""
        # Hits are a read-modify-write of meta.json under the entry lock. An
        # append-only hit log would need no lock, but it grows with every hit
        # (hour-long campaigns hit one bug millions of times) and leaves
        # meta.json stale; the lock is held only for one tiny file.
        for _ in range(5):
            try:
                with _locked(entry):
                    if not os.path.isdir(entry):
                        raise FileNotFoundError(entry)
                    now = _now()
                    try:
                        meta = read(entry / "meta.json")
                    except CorpusFileError as e:
                        # never rewritten: a fresh meta.json would lose its hits, variants, shrink and origin
                        why = " ".join(str(e).removeprefix(f"{entry / 'meta.json'}: ").split())
                        self.uncounted[entry] = CorpusError(entry, f"meta.json is unreadable ({why}): hits on it "
                                                            "are not counted and it is left as it is; fix it")
                        return entry
                    meta["hits"] += 1
                    meta["last_seen"] = now
                    variants = meta.get("variants")
                    if isinstance(variants, dict) and key:
                        v = variants.setdefault(key, {"hits": 0, "first_seen": now})
                        v["hits"] = v.get("hits", 0) + 1
                        v["last_seen"] = now
                    _write_atomic(entry / "meta.json", _dumps(meta))
                    return entry
            except FileNotFoundError:  # merged into another entry while we waited for its lock
                moved = self.resolve(key or entry.name)
                if moved is None or moved == entry:
                    raise
                entry = moved
        raise CorpusError(entry, "kept moving while a hit was counted")

    def update_shrunk(self, entry_dir, program, verdict: Verdict, record: dict) -> Entry:
        """Replace an entry's program by a smaller one that reproduces its bug
        (a shrink): program.json, verdict.json and repro.py are rewritten, the
        first program is kept as original_program.json, and `record` (the
        shrink's figures) goes under meta.json's "shrink" with the time.
        signature.json stays: the entry keeps its key whatever the shrunk
        program's own signature text (a value finding may lose op families);
        `rekey` moves it to its minimal signature.

        Each file is replaced atomically and the whole update runs under the
        entry lock, so it never interleaves with a hit or another update.
        Returns the entry as read back."""
        d = Path(entry_dir)
        with _locked(d):
            entry = self.load(d)
            if not (d / "original_program.json").exists() and not entry.minimal:  # re-keyed: variants/ has them
                _write_atomic(d / "original_verdict.json", _dumps(entry.verdict.to_dict()))
                _write_atomic(d / "original_program.json", entry.program.to_json(indent=2) + "\n")
            _write_atomic(d / "program.json", program.to_json(indent=2) + "\n")
            _write_atomic(d / "verdict.json", _dumps(verdict.to_dict()))
            scripts, updates = entry_scripts(program, verdict, entry.signature)
            _store_scripts(d, scripts)
            meta = _apply_meta(dict(entry.meta), updates)
            meta["shrink"] = {**record, "at": _now()}
            _write_atomic(d / "meta.json", _dumps(meta))
            return self.load(d)

    def move_aside(self, entry_dir, where: str) -> Path:
        """Move an entry into set-aside dir `where` (one of SET_ASIDE), whole, its keys pointing there (the
        next hit of any of them counts there); merged into the one there when that cause was set aside
        before. Returns where it is now."""
        from fuzz.files import fsync_dir

        assert where in SET_ASIDE, where
        src = Path(entry_dir)
        dst_root = self.root / where
        inside(self.root, dst_root / src.name)  # the set-aside dir a real directory, never a symlink's target
        dst_root.mkdir(exist_ok=True)
        dst = dst_root / src.name
        target = f"{where}/{src.name}"
        if dst.is_dir():  # this cause was set aside before: merge into it (hits and variants add up)
            return self.rekey(src, self.load(src).signature, into=target)
        with _locked(src):
            entry = self.load(src)
            os.rename(src, dst)
            fsync_dir(self.root)
        self._update_index({**{k: target for k in entry.variants}, src.name: target})
        return dst

    def set_meta(self, entry_dir, key: str, value) -> None:
        """Set one field of the entry's meta.json (under the entry lock)."""
        d = Path(entry_dir)
        with _locked(d):
            meta = dict(self.load(d).meta)
            meta[key] = value
            _write_atomic(d / "meta.json", _dumps(meta))

    def rekey(self, entry_dir, sig: Signature, size: Callable | None = None, into: str | None = None) -> Path:
        """Move an entry to signature `sig` (its minimal one) and merge it with
        the entry already there, if any; returns the entry's directory now.

        Merging sums the hits (per provisional key), takes the earliest
        first_seen and latest last_seen, keeps every program as found under
        variants/<provisional key>/ and makes the smaller program (by `size`,
        default its JSON length) the representative. The index then sends the
        absorbed provisional keys to the merged entry, and the old directory
        goes. Every step is idempotent (a variant already there keeps the
        larger hit count), so a merge cut short by a kill is finished by doing
        it again; both entry locks are held throughout, so no hit is lost.
        `into`: merge into this existing entry (a path in the corpus) instead."""
        size, target = size or (lambda p: len(p.to_json())), into or sig.key
        src_dir, dst_dir = Path(entry_dir), self.root / target
        if src_dir == dst_dir:
            with _locked(src_dir):
                e = self.load(src_dir)
                if e.signature != sig:
                    _write_atomic(src_dir / "signature.json", _dumps(sig.to_dict()))
            return src_dir
        with _locked(src_dir):  # then dst's: entries only ever merge into a minimal key, never out of it
            src = self.load(src_dir)
            if not dst_dir.is_dir():
                self._create_from(src, sig)  # a new directory, complete, renamed into place (or already there)
            with _locked(dst_dir):
                self._merge_into(src, self.load(dst_dir), size)
            self._update_index({**{k: target for k in src.variants}, src.key: target})
            trash = self.root / f".trash-{src.key}-{os.getpid()}"
            os.rename(src_dir, trash)
            _fsync_dir(self.root)
        shutil.rmtree(trash, ignore_errors=True)
        return dst_dir

    def _create_from(self, src: Entry, sig: Signature) -> None:
        """A new entry at sig.key with src's representative and no variants yet."""
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{sig.key}-", dir=self.root))
        try:
            os.chmod(tmp, 0o755)
            for name in ("program.json", "verdict.json", "env.json", "ablation.json", "sanitizer.txt") + _ORIGINALS:
                if (src.path / name).is_file():  # read as a file of its kind (never through a link), then written
                    _write(tmp / name, _stored(src.path / name))
            scripts, updates = entry_scripts(src.program, src.verdict, sig)
            meta = {k: v for k, v in src.meta.items() if k not in ("variants", "hits")}
            meta.update(hits=src.hits, variants={}, first_seen=src.meta["first_seen"], last_seen=src.meta["last_seen"])
            _apply_meta(meta, updates)
            for name, text in scripts.items():
                _write(tmp / name, text)
            _write(tmp / "signature.json", _dumps(sig.to_dict()))
            _write(tmp / "meta.json", _dumps(meta))
            _fsync_dir(tmp)
            try:
                os.rename(tmp, self.path_of(sig.key))
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
            else:
                _fsync_dir(self.root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _merge_into(self, src: Entry, dst: Entry, size: Callable) -> None:
        """src's variants, hits and (if smaller) program into dst; dst is locked."""
        d = dst.path
        variants = dict(dst.meta.get("variants") or {}) if dst.minimal else {}
        if not dst.minimal:  # merging into an entry as found: it becomes a variant of itself
            variants.update(dst.variants)
            self._save_variant(d, dst.key, dst)
        for k, v in src.variants.items():
            old = variants.get(k, {})
            variants[k] = {**old, **v, "hits": max(old.get("hits", 0), v.get("hits", 0)),
                           "first_seen": min(x for x in (old.get("first_seen"), v["first_seen"]) if x),
                           "last_seen": max(x for x in (old.get("last_seen"), v["last_seen"]) if x)}
            self._save_variant(d, k, src)
        meta = dict(dst.meta)
        meta["variants"] = variants
        meta["hits"] = sum(v.get("hits", 0) for v in variants.values())
        meta["first_seen"] = min(v["first_seen"] for v in variants.values())
        meta["last_seen"] = max(v["last_seen"] for v in variants.values())
        if src.path != d and size(src.program) < size(dst.program):
            _write_atomic(d / "program.json", src.program.to_json(indent=2) + "\n")
            _write_atomic(d / "verdict.json", _dumps(src.verdict.to_dict()))
            for name in ("ablation.json", "report.md"):
                (d / name).unlink(missing_ok=True)  # of the program it had
            for name in ("ablation.json",) + _ORIGINALS:
                if (src.path / name).is_file():
                    _write_atomic(d / name, _stored(src.path / name))
                else:
                    (d / name).unlink(missing_ok=True)
            meta["shrink"] = src.meta.get("shrink")
            if meta["shrink"] is None:
                del meta["shrink"]
        program = load_program(read_program_json(d / "program.json"))
        verdict = Verdict.from_dict(read(d / "verdict.json"))
        meta["seen_with"] = _seen_with(d, program)
        scripts, updates, _ = settled_scripts(program, verdict, dst.signature, meta)
        _store_scripts(d, scripts)
        _apply_meta(meta, updates)
        _write_atomic(d / "meta.json", _dumps(meta))

    @staticmethod
    def _save_variant(d: Path, key: str, e: Entry) -> None:
        """Entry e's program and verdict as found, under d/variants/key/ (once)."""
        v, src_v = d / "variants" / key, e.path / "variants" / key
        if (v / "program.json").is_file() or (e.minimal and not (src_v / "program.json").is_file()):
            return  # there already; or a key a re-keyed entry only counted hits of (no program kept)
        inside(d, v / "program.json")  # variants/ and variants/KEY real directories, never a symlink's target
        v.mkdir(parents=True, exist_ok=True)
        os.chmod(v.parent, 0o755)
        os.chmod(v, 0o755)
        if (src_v / "program.json").is_file():  # e holds it as a variant already
            for name in ("verdict.json", "program.json"):
                if (src_v / name).is_file():
                    _write_atomic(v / name, _stored(src_v / name))
            return
        program = e.path / ("original_program.json" if (e.path / "original_program.json").is_file() else "program.json")
        verdict = e.path / ("original_verdict.json" if (e.path / "original_verdict.json").is_file() else "verdict.json")
        _write_atomic(v / "verdict.json", _stored(verdict))
        _write_atomic(v / "program.json", _stored(program))  # last: its presence says the variant is complete

    def entries(self) -> Iterator[Entry]:
        """Every readable entry, by key. Unreadable ones are skipped and
        collected in self.errors (reset when iteration starts)."""
        self.errors = []
        if not self.root.is_dir():
            return
        for d in sorted(self.root.iterdir()):
            if d.name.startswith(".") or d.name in SET_ASIDE or not d.is_dir():
                continue  # temp dirs of records in flight, files like known_issues.json, set-aside entries
            try:
                yield self.load(d)
            except CorpusError as e:
                self.errors.append(e)

    def load(self, entry_dir) -> Entry:
        d = Path(entry_dir)
        if os.path.islink(d):
            raise CorpusError(d, "is a symlink; a corpus entry is a real directory inside its corpus")
        if not d.is_dir():
            raise CorpusError(d, "not a corpus entry directory")
        missing = [f for f in FILES if not (d / f).is_file()]
        if len(missing) == len(FILES):
            raise CorpusError(d, f"not a corpus entry (it has none of {', '.join(FILES)})")
        if missing:
            raise CorpusError(d, f"missing {', '.join(missing)}")
        try:  # each file against its schema (fuzz/findings/store/corpus_files.json): one line naming the field
            data = {name: read(d / name) for name in FILES[:-1] if name != "program.json"}
            program_json = read_program_json(d / "program.json")
        except CorpusFileError as e:
            raise CorpusError(d, str(e).removeprefix(f"{d}/")) from None
        sig = _load_signature(d, data["signature.json"])
        try:
            program = load_program(program_json)
        except ProgramError as e:
            raise CorpusError(d, f"program.json: {e}") from None
        verdict = Verdict.from_dict(data["verdict.json"])
        meta = data["meta.json"]
        for k in ("first_seen", "last_seen"):
            try:
                datetime.fromisoformat(meta[k])
            except ValueError:
                raise CorpusError(d, f"meta.json: {k} must be an ISO time, got {meta.get(k)!r}") from None
        return Entry(path=d, signature=sig, program=program, verdict=verdict, env=data["env.json"], meta=meta)


def _stored(path: Path) -> str:
    """The text of an entry's file to copy into another entry, read as a file of its kind (corpus_files.py)."""
    from fuzz.findings.store.corpus_files import read_checked_text, read_stored_text

    return read_stored_text(path) if path.name == "sanitizer.txt" else read_checked_text(path)


def _store_scripts(d: Path, scripts: dict) -> None:
    """Write an entry's scripts (atomically) and drop the harness.py older entries stored."""
    for name, text in scripts.items():
        _write_atomic(d / name, text)
    (d / HARNESS).unlink(missing_ok=True)


@contextmanager
def _locked(entry: Path, name: str = _LOCK):
    """An exclusive flock on entry/.lock: every read-modify-write of an entry's
    files (root/.index.lock: of the index). Every write into an existing entry
    holds it, so here the entry is checked to be a real directory inside its
    corpus (OutsideCorpus otherwise) and a symlinked lock file is never followed."""
    entry_inside(entry) if name == _LOCK else inside(entry, entry / name)
    fd = os.open(entry / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _load_signature(d: Path, s: dict) -> Signature:
    sig = Signature.from_dict(s)
    if sig.key != d.name:
        raise CorpusError(d, f"signature.json: key {sig.key!r} does not match the directory name")
    if Signature.of_text(sig.text).key != sig.key:
        raise CorpusError(d, "signature.json: text does not hash to key (edited by hand?)")
    return sig
