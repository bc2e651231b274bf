"""Which torch releases a corpus entry's bug affects (`shapefuzz versions`).

Each release gets its own virtualenv with that torch from the package index
(pip, as this machine is set up; SHAPEFUZZ_TORCH_INDEX adds an index URL),
made once and kept in a cache dir (SHAPEFUZZ_VENV_CACHE, default
~/.cache/shapefuzz/torch-venvs), marked complete only once torch imports. The
entry's short repro -- written afresh from its program and verdict, never its
stored file -- runs standalone under each: failing as the finding did is
"affected", passing is "passes", anything else (an API the release lacks, a
crash of another kind) is "error" with the reason. A CUDA entry runs only
under the interpreters given (this one by default), so its range is partial.

The result goes under the entry's meta.json "versions": each release's
result, the affected and passing releases, the first release after the last
affected one that passes ("first fixed in"), and when it was checked.
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

AFFECTED, PASSES, ERROR = "affected", "passes", "error"
DEFAULT_RELEASES = ("2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13")


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


@dataclass
class Env:
    release: str
    python: str
    torch: str  # the exact version installed


def ensure_env(release: str, *, log=None, timeout: float = 3600) -> Env:
    """The cached virtualenv of `release`, made (venv + pip install) when missing or incomplete."""
    spec = _spec(release)
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
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
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


def entry_versions(entry, releases, *, pythons=None, timeout: float = 600.0, log=None) -> dict:
    """Run the entry's short repro under each release (a CUDA entry: under `pythons`, default this
    interpreter) and return the "versions" record. VersionsError when it has no short form."""
    from fuzz.findings.corpus import entry_scripts

    scripts, info = entry_scripts(entry.program, entry.verdict, entry.signature)
    if "lines" not in info["short_repro"]:
        raise VersionsError(f"{entry.key}: no short repro to run ({info['short_repro'].get('full_harness')})")
    src = scripts["repro.py"]
    results = {}
    cuda = entry.program.device_type() == "cuda"
    if cuda or pythons:
        envs = []
        for py in pythons or [sys.executable]:
            import shutil

            py = os.path.abspath(py) if os.sep in py else (shutil.which(py) or py)  # the repro runs elsewhere
            r = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
            if r.returncode != 0:
                raise VersionsError(f"{py}: torch does not import there")
            envs.append(Env(release=r.stdout.strip().split("+")[0], python=py, torch=r.stdout.strip()))
    else:
        envs = [ensure_env(rel, log=log) for rel in releases]
    for env in envs:
        result, shown, seconds = run_short(src, entry.verdict, env.python, timeout)
        results[env.release] = {"result": result, "torch": env.torch, "shown": shown[:300], "seconds": round(seconds, 1)}
        if log:
            log(f"{entry.key}: torch {env.torch}: {result} ({shown[:120]})")
    return summarize(results, partial=cuda or bool(pythons))
