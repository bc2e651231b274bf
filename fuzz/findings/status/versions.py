"""Which torch releases a corpus entry's bug affects (`shapefuzz versions`).

Each release gets its own virtualenv with that torch from the package index
(pip, as this machine is set up; SHAPEFUZZ_TORCH_INDEX adds an index URL),
made once and kept in a cache dir (SHAPEFUZZ_VENV_CACHE, default
~/.cache/shapefuzz/torch-venvs), marked complete only once torch imports. The
entry's short repro -- written afresh from its program and verdict, never its
stored file -- runs standalone under each: failing as the finding did is
"affected", passing is "passes", anything else (an API the release lacks, a
crash of another kind) is "error" with the reason. A CUDA entry runs only
under the interpreters given (this one by default), so its range is partial;
its CPU twin (the same program on device "cpu") is tried too, and where the
twin fails here as the finding did, it runs under every release like a CPU
entry ("cpu" in the record): a GPU finding that reproduces on CPU gets its
full range, the newest release included, on a machine without a GPU.
`--torch newest` names the newest torch release on the package index, whatever a
machine-wide pip constraint allows (fuzz/releases.py), and each release is
installed exactly, the constraint lifted for that install; the release this
interpreter has runs here, with no venv of its own.

The result goes under the entry's meta.json "versions": each release's
result, the affected and passing releases, the first release after the last
affected one that passes ("first fixed in"), and when it was checked. A run
of some releases adds to the record (merge_records): the releases run again
replace their results, the rest stay, so moving a corpus to a new release
is `shapefuzz versions CORPUS --torch newest`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

AFFECTED, PASSES, ERROR, NOT_RUN = "affected", "passes", "error", "not run"
DEFAULT_RELEASES = ("2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "newest")
NEWEST = "newest"


class VersionsError(ValueError):
    """A release cannot be set up (no such torch on the index, pip failed); one line."""


def cache_root() -> Path:
    return Path(os.environ.get("SHAPEFUZZ_VENV_CACHE") or Path.home() / ".cache" / "shapefuzz" / "torch-venvs")


def _key(release: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.+]", release))


def _spec(release: str) -> str:
    """pip's requirement for a release: "2.6" -> torch==2.6.*, "2.13.0" -> torch==2.13.0."""
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?(\+\w+)?", release):
        raise VersionsError(f"not a torch release: {release!r} (give e.g. 2.6 or 2.13.0)")
    return f"torch=={release}.*" if release.count(".") == 1 else f"torch=={release}"


def newest_release(timeout: float = 120.0) -> str:
    """The newest torch release on the package index, whatever a local pip constraint allows
    (fuzz/releases.py). VersionsError where pip cannot say (no index: a box offline)."""
    from fuzz.releases import ReleaseError, newest

    try:
        return newest(timeout)
    except ReleaseError as e:
        raise VersionsError(str(e)) from None


def resolve_releases(releases, log=None) -> list[str]:
    """`releases` with "newest" resolved (once) and each checked; VersionsError names a bad one. `log` hears
    once where this machine's pip configuration would hold torch below the newest release."""
    out, newest = [], None
    for r in releases:
        if r == NEWEST and newest is None:
            newest = newest_release()
            if log:
                from fuzz.releases import constraint_note

                note = constraint_note(newest)
                if note:
                    log(f"newest = torch {newest}: {note}")
        r = newest if r == NEWEST else r
        _spec(r)
        if r not in out:
            out.append(r)
    return out


def _this_torch() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def _script_digest(src: str) -> str:
    """Which script a result is of (a stored repro.py that hashes alike is the one that ran)."""
    from fuzz.findings.store.scripts import _digest

    return _digest(src)


def _this_torch_version() -> str:
    import torch

    return torch.__version__


def _this_release() -> str:
    return _this_torch_version().split("+")[0]


def _is_this_torch(release: str) -> bool:
    """Whether `release` ("2.15" or "2.15.0") names the torch this interpreter has: its repro runs here."""
    from fuzz.releases import release_key

    here = _this_torch()
    if not here:
        return False
    want = release_key(release)
    return release_key(here)[:len(want)] == want


@dataclass
class Env:
    release: str
    python: str
    torch: str  # the exact version installed


def ensure_env(release: str, *, log=None, timeout: float = 3600) -> Env:
    """The cached virtualenv of `release`, made (venv + pip install) when missing or incomplete."""
    spec = _spec(release)
    if _is_this_torch(release):  # no second copy of a multi-GB torch for the release this one is
        return Env(release=release, python=sys.executable, torch=_this_torch())
    d = cache_root() / f"torch-{release}-py{sys.version_info[0]}{sys.version_info[1]}"
    py = d / "bin" / "python"
    done = d / ".shapefuzz-complete"
    if not done.is_file():
        if log:
            log(f"setting up torch {release} in {d} (once; kept for later runs)")
        d.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(d)], check=True, capture_output=True)
        cmd = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", spec]
        index = os.environ.get("SHAPEFUZZ_TORCH_INDEX")
        if index:
            cmd += ["--extra-index-url", index]
        # exactly the release asked for, even where a machine-wide pip constraint would hold it back
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, PIP_CONSTRAINT=os.devnull))
        if r.returncode != 0:
            tail = " ".join((r.stderr or r.stdout).strip().splitlines()[-2:])
            raise VersionsError(f"torch {release}: pip could not install {spec}: {tail[:300]}")
    r = subprocess.run([str(py), "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        raise VersionsError(f"torch {release}: the venv's torch does not import: {r.stderr.strip()[-300:]}")
    done.write_text(r.stdout.strip() + "\n")
    return Env(release=release, python=str(py), torch=r.stdout.strip())


def run_short(src: str, verdict, python: str, timeout: float) -> tuple[str, str, float]:
    """(AFFECTED | PASSES | ERROR, what it showed, seconds) of short repro `src` under `python`."""
    from fuzz.judge.isolated import child_env, run_command
    from fuzz.program.short_repro import failure_matches

    with tempfile.TemporaryDirectory(prefix="shapefuzz-versions-") as work:
        (Path(work) / "repro.py").write_text(src)
        env = child_env(None)
        env.pop("PYTHONPATH", None)  # the release's torch, not this one's packages
        start = time.monotonic()
        rc, out, err = run_command([python, "repro.py"], timeout=timeout, env=env, cwd=work)
    seconds = time.monotonic() - start
    if rc == 0:
        return PASSES, "exit 0", seconds
    ok, shown = failure_matches(verdict, rc, out, err)
    return (AFFECTED if ok else ERROR), shown, seconds


def newest_checked(rec: dict | None) -> tuple[str, str] | None:
    """(release, result) of the newest release an entry's record ran its repro under, the CPU twin's
    included (the newer of the two where both ran it), or None when none did."""
    ran = []
    twin = (rec or {}).get("cpu") or {}
    # a twin that never failed says nothing of the bug (it is CUDA's): its passing runs are not results
    for part in (rec or {}), (twin if isinstance(twin, dict) and twin.get("reproduces") else {}):
        for rel, r in (part.get("releases") or {}).items():
            if r.get("result") in (AFFECTED, PASSES):
                ran.append((_key(rel), rel, r["result"]))
    if not ran:
        return None
    _, rel, result = max(ran)
    return rel, result


def summarize(results: dict, partial: bool) -> dict:
    """meta.json's "versions" from {release: {"result", ...}}."""
    order = sorted(results, key=_key)
    affected = [r for r in order if results[r]["result"] == AFFECTED]
    passes = [r for r in order if results[r]["result"] == PASSES]
    first_fixed = None
    if affected:
        later = [r for r in passes if _key(r) > _key(affected[-1])]
        first_fixed = later[0] if later else None
    return {"releases": {r: results[r] for r in order}, "affected": affected, "not_affected": passes,
            "first_fixed": first_fixed, "partial": partial, "checked": date.today().isoformat()}


def merge_records(old: dict | None, new: dict) -> dict:
    """An entry's versions record after a run of some releases: the releases run now replace their earlier
    results, the others are kept, and the summary is made again, so `--torch newest` on a new release adds
    it to the range rather than forgetting the older ones. Read as untrusted: a malformed old record, or
    part of one, is dropped."""
    def releases(rec) -> dict:
        got = rec.get("releases") if isinstance(rec, dict) else None
        return {k: v for k, v in got.items() if isinstance(k, str) and isinstance(v, dict) and
                isinstance(v.get("result"), str)} if isinstance(got, dict) else {}

    def part(o, n) -> dict:
        return summarize({**releases(o), **releases(n)}, partial=bool(n.get("partial")))

    old = old if isinstance(old, dict) else {}
    out = part(old, new)
    twin_new, twin_old = new.get("cpu"), old.get("cpu")
    if isinstance(twin_new, dict):
        twin = part(twin_old if isinstance(twin_old, dict) else {}, twin_new)
        # the twin reproduces where any release it ran on was affected: one that passes here now is fixed
        # in this release, not a twin that never failed
        out["cpu"] = {"reproduces": True, **twin} if twin["affected"] else twin_new
    return out


def entry_versions(entry, releases, *, pythons=None, timeout: float = 600.0, log=None) -> dict:
    """Run the entry's short repro under each release (a CUDA entry: under `pythons`, default this
    interpreter) and return the "versions" record. VersionsError when it has no short form."""
    from fuzz.findings.store.corpus import entry_scripts

    scripts, info = entry_scripts(entry.program, entry.verdict, entry.signature)
    if "lines" not in info["short_repro"]:
        raise VersionsError(f"{entry.key}: no short repro to run ({info['short_repro'].get('full_harness')})")
    src = scripts["repro.py"]
    rec = _ranged(src, entry.verdict, entry.key, releases, cuda=entry.program.device_type() == "cuda",
                  pythons=pythons, timeout=timeout, log=log)
    if cpu_twin(entry.program) is not None and not pythons:
        rec["cpu"] = _twin_versions(entry, releases, timeout=timeout, log=log)
    return rec


def cpu_twin(program):
    """A CUDA program's twin on device "cpu", or None (a CPU or torch_xla program)."""
    from dataclasses import replace

    from fuzz.program.ir import Program

    if not isinstance(program, Program) or program.device_type() != "cuda":
        return None
    return replace(program, settings=replace(program.settings, device="cpu"))


def _twin_versions(entry, releases, *, timeout: float, log=None) -> dict:
    """The "cpu" part of a CUDA entry's record: whether its CPU twin fails here as the finding did
    (this interpreter's torch), and if it does, its result under every release."""
    from fuzz.findings.store.scripts import entry_scripts

    # the entry's short repro on device "cpu": the very script a CUDA entry stores where its CPU form is its repro
    scripts, info = entry_scripts(entry.program, entry.verdict, entry.signature, "cpu")
    if "lines" not in info["short_repro"]:
        return {"reproduces": False, "shown": f"no short form on CPU ({info['short_repro'].get('full_harness')})"[:300],
                "checked": date.today().isoformat()}
    src = scripts["repro.py"]
    result, shown, seconds = run_short(src, entry.verdict, sys.executable, timeout)
    if log:
        log(f"{entry.key}: CPU twin under this torch: {result} ({shown[:120]})")
    if result != AFFECTED:
        # passing here is a result of this release (a twin that failed on older ones is fixed in it); a
        # failure of another kind says nothing of any release
        here = {} if result != PASSES else {"releases": {_this_release(): {
            "result": PASSES, "torch": _this_torch_version(), "shown": shown[:300], "seconds": round(seconds, 1),
            "script": _script_digest(src)}}}
        return {"reproduces": False, "shown": shown[:300], "checked": date.today().isoformat(), **here}
    for rel in releases:
        ensure_env(rel, log=log)
    return {"reproduces": True,
            **_ranged(src, entry.verdict, entry.key, releases, cuda=False, pythons=None, timeout=timeout, log=log)}


def _ranged(src: str, verdict, key: str, releases, *, cuda: bool, pythons, timeout: float, log=None) -> dict:
    """Short repro `src` under each release's venv (a CPU program) or each interpreter (CUDA, or given)."""
    results = {}
    if cuda or pythons:
        envs = []
        for py in pythons or [sys.executable]:
            import shutil

            py = os.path.abspath(py) if os.sep in py else (shutil.which(py) or py)  # the repro runs elsewhere
            r = subprocess.run([py, "-c", "import torch; print(torch.__version__, torch.cuda.is_available())"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise VersionsError(f"{py}: torch does not import there")
            version, has_cuda = r.stdout.split()
            if cuda and has_cuda != "True":  # a CPU machine: its CPU twin speaks for it
                results[version.split("+")[0]] = {"result": NOT_RUN, "torch": version, "shown": "no CUDA device here"}
                continue
            envs.append(Env(release=version.split("+")[0], python=py, torch=version))
    else:
        envs = [ensure_env(rel, log=log) for rel in releases]
    for env in envs:
        result, shown, seconds = run_short(src, verdict, env.python, timeout)
        results[env.release] = {"result": result, "torch": env.torch, "shown": shown[:300], "seconds": round(seconds, 1),
                                "script": _script_digest(src)}
        if log:
            log(f"{key}: torch {env.torch}: {result} ({shown[:120]})")
    return summarize(results, partial=cuda or bool(pythons))


def release_of(torch_version) -> str:
    return str(torch_version or "").split("+")[0]


def versions_record(entry) -> dict | None:
    """meta.json's "versions" (`shapefuzz versions`), or None when absent or not an object."""
    rec = entry.meta.get("versions")
    return rec if isinstance(rec, dict) else None


def ran_on(entry) -> tuple[str, str, str] | None:
    """(release, result, where) of the newest torch the entry's repro ran on: its versions record (the
    CPU twin's too), or the torch it was found with, which it failed on by definition."""
    rec = versions_record(entry)
    seen = []
    got = newest_checked(rec)
    if got:
        twin = (rec.get("cpu") or {}).get("releases") or {}
        seen.append((_key(got[0]), got[0], got[1], "CPU twin" if got[0] in twin else ""))
    found = release_of(entry.env.get("torch"))
    if found and found[0].isdigit():
        seen.append((_key(found), found, AFFECTED, "found"))
    if not seen:
        return None
    _, rel, result, where = max(seen, key=lambda t: (t[0], t[3] != "found"))
    return rel, result, where
