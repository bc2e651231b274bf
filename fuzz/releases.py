"""Which torch release is the newest: the newest on the package index, not the newest a local pip
constraint lets this machine install.

A fuzzer must choose the compiler it tests, and a report that does not reproduce on the current release is
closed upstream. Some machines carry a machine-wide pip constraint that caps torch below the current release;
"newest" here ignores it (pip runs with its constraint set to an empty file) and says once where the two
differ. Only the standard library is used, so that scripts/setup.sh can ask before anything is installed:
`python3 -m fuzz.releases newest` prints the release, `python3 -m fuzz.releases allowed` what the local
constraint allows.

The answer is kept for a day under the cache dir (SHAPEFUZZ_CACHE, default ~/.cache/shapefuzz), so that
`bugs` and `report` know the newest release on a machine that cannot reach the index now (a GPU box with
no network) from the last time one could; `recorded()` reads it without asking pip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

DAY = 24 * 3600
RELEASE = re.compile(r"\d+\.\d+(\.\d+)?")
NEWEST_ENV, OFFLINE = "SHAPEFUZZ_NEWEST_TORCH", "offline"


class ReleaseError(ValueError):
    """pip could not say which torch is the newest (no index: a machine offline); one line."""


def cache_dir() -> Path:
    return Path(os.environ.get("SHAPEFUZZ_CACHE") or Path.home() / ".cache" / "shapefuzz")


def _record_path() -> Path:
    return cache_dir() / "newest-torch.json"


def release_key(release: str) -> tuple:
    """A sortable key of "2.15.0" (local tags such as "+cpu" dropped)."""
    return tuple(int(x) for x in re.findall(r"\d+", str(release).split("+")[0])[:3])


def _resolve(*, lift_constraint: bool, timeout: float) -> str:
    """The torch release pip resolves `torch` to, with or without this machine's constraint."""
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed", "--no-deps",
           "--disable-pip-version-check", "--report", "-", "torch"]
    index = os.environ.get("SHAPEFUZZ_TORCH_INDEX")
    if index:
        cmd += ["--extra-index-url", index]
    env = dict(os.environ)
    if lift_constraint:
        env["PIP_CONSTRAINT"] = os.devnull  # the environment outranks pip's config files
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        reason = f"no answer within {timeout:g} s" if isinstance(e, subprocess.TimeoutExpired) else str(e)
        raise ReleaseError(f"the newest torch release is unknown here: pip could not resolve it ({reason})") from None
    try:  # pip's JSON report; where it failed (no index reachable) there is none, and its last error line says why
        found = [i["metadata"]["version"] for i in json.loads(r.stdout)["install"]
                 if i["metadata"]["name"].lower() == "torch"] if r.returncode == 0 else []
    except (ValueError, KeyError, TypeError, AttributeError):
        found = []
    if len(found) != 1 or not RELEASE.match(str(found[0])):
        tail = " ".join((r.stderr or "").strip().splitlines()[-1:])[:200]
        raise ReleaseError(f"the newest torch release is unknown here: pip could not resolve it "
                           f"({tail or 'no answer'})")
    return str(found[0]).split("+")[0]


def _stated() -> str | None:
    """SHAPEFUZZ_NEWEST_TORCH: the newest release as the user states it (a machine with no index: a GPU box
    offline), or "offline" for none known without asking. ReleaseError for anything else."""
    said = os.environ.get(NEWEST_ENV, "").strip()
    if not said:
        return None
    if said != OFFLINE and not RELEASE.fullmatch(said):
        raise ReleaseError(f"{NEWEST_ENV}={said!r} is not a torch release (give e.g. 2.15.0, or {OFFLINE})")
    return said


def newest(timeout: float = 120.0) -> str:
    """The newest torch release on the package index, whatever a local constraint allows; recorded for
    `recorded()`. ReleaseError where pip cannot say (or SHAPEFUZZ_NEWEST_TORCH says offline)."""
    said = _stated()
    if said == OFFLINE:
        raise ReleaseError(f"the newest torch release is unknown here ({NEWEST_ENV}={OFFLINE})")
    if said:
        return said
    got = _resolve(lift_constraint=True, timeout=timeout)
    _write_record(got)
    return got


def allowed(timeout: float = 120.0) -> str:
    """The newest torch release pip installs here as it is configured (its constraints applied)."""
    return _resolve(lift_constraint=False, timeout=timeout)


def constraint_note(newest_release: str, timeout: float = 120.0) -> str | None:
    """One line when this machine's pip configuration holds torch below `newest_release`, else None."""
    try:
        here = allowed(timeout)
    except ReleaseError:
        return f"this machine's pip configuration cannot install torch {newest_release} (a constraint or no index)"
    if release_key(here) < release_key(newest_release):
        return (f"this machine's pip constraint caps torch at {here}; torch {newest_release} is the newest "
                f"release on the index, and shapefuzz lifts the cap where it installs torch")
    return None


def _write_record(release: str) -> None:
    path = _record_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"newest": release, "asked": time.time()}) + "\n")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: the answer is still given, only not remembered


def recorded(max_age: float | None = None) -> str | None:
    """The newest release the index named when it was last asked (within `max_age` seconds if given),
    or None. Read as untrusted data: anything but a small object with a release string is ignored."""
    path = _record_path()
    from fuzz.datafile import DataFileError, read_json

    try:
        if not path.is_file():
            return None
        rec = read_json(path, 4096, follow_symlinks=False)
        release, asked = rec["newest"], float(rec["asked"])
    except (DataFileError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(release, str) or not RELEASE.fullmatch(release):
        return None
    if max_age is not None and time.time() - asked > max_age:
        return None
    return release


def known_newest() -> str | None:
    """The newest release as stated (SHAPEFUZZ_NEWEST_TORCH) or recorded, without asking the index."""
    try:
        said = _stated()
    except ReleaseError:
        return None
    return None if said == OFFLINE else said or recorded()


def newest_or_recorded(timeout: float = 20.0) -> tuple[str | None, str]:
    """(release, how it is known) for readers that must not fail offline: a record of the last day, else
    the index asked now, else an older record, else (None, why)."""
    try:
        said = _stated()
    except ReleaseError as e:
        return None, str(e)
    if said == OFFLINE:
        return None, f"{NEWEST_ENV}={OFFLINE}"
    if said:
        return said, NEWEST_ENV
    fresh = recorded(max_age=DAY)
    if fresh:
        return fresh, "the package index, asked within the last day"
    try:
        return newest(timeout), "the package index"
    except ReleaseError as e:
        old = recorded()
        return (old, "the package index, when it was last reachable") if old else (None, str(e))


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    what = args[0] if args else "newest"
    try:
        if what == "newest":
            print(newest())
        elif what == "allowed":
            print(allowed())
        elif what == "note" and len(args) == 2:
            note = constraint_note(args[1])
            if note:
                print(note)
        else:
            print("usage: python -m fuzz.releases [newest | allowed | note RELEASE]", file=sys.stderr)
            return 2
    except ReleaseError as e:
        print(f"shapefuzz: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
