"""Every file shapefuzz reads from a user comes in one way (fuzz/datafile.py): a regular file opened without
blocking, size-capped, parsed with limits, checked by its kind's schema. This scans the package for any other
read -- open() for reading, read_text/read_bytes, json/pickle loads, a file copy -- and holds each one it finds
to the short list below, which says why that read is not of a user's file."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The modules that are the way in (reads) and the way out (writes, and a directory opened to fsync it).
THE_WAY = {"fuzz/datafile.py", "fuzz/files.py"}

# (module, function) -> why its read is not of a file a user gives.
NOT_DATA = {
    ("fuzz/program/schema.py", "schema"): "the package's own schema.json",
    ("fuzz/program/typecheck.py", "op_params"): "the package's own op_params.json",
    ("fuzz/findings/store/corpus_files.py", "schema"): "the package's own corpus_files.json",
    ("fuzz/campaign/state_files.py", "schema"): "the package's own state_files.json",
    ("fuzz/campaign/state.py", "open"): "a JSON round trip of the campaign's own config (no file)",
    ("fuzz/campaign/state.py", "_lock"): "the lock file's holder pid, opened by files.open_regular; digits only",
    ("fuzz/campaign/workers.py", "_read_log"): "a worker's own log, made regular by open_regular when it starts",
    ("fuzz/campaign/followups/local.py", "job_in_zygote"): "the pickle the runner wrote into a job dir of its own",
    ("fuzz/campaign/followups/local.py", "_run_in_zygote"): "the pickle its job wrote back into that dir",
    ("fuzz/campaign/cluster/node.py", "_capture_env"): "a child process's stdout",
    ("fuzz/findings/report/trace.py", "collect_trace"): "TORCH_TRACE logs the repro wrote into a temp dir of our own",
    ("fuzz/releases.py", "_resolve"): "pip's stdout",
    ("fuzz/judge/faults.py", "_vm_size"): "/proc/self/status",
    ("fuzz/judge/steps.py", "main"): "the request its parent sends on stdin",
    ("fuzz/judge/steps.py", "_run_fresh"): "the verdict line of a child process",
    ("fuzz/judge/zygote.py", "_start"): "a request on the zygote's socket, from this process",
    ("fuzz/judge/zygote.py", "_child"): "/dev/null as stdin",
    ("fuzz/judge/zygote.py", "run"): "the zygote's answers",
    ("fuzz/judge/zygote.py", "wait"): "the zygote's answers",
    ("fuzz/findings/status/upstream_search.py", "search"): "an HTTP answer: capped, then parsed by datafile.loads",
}

_LOADERS = {("json", "load"), ("json", "loads"), ("pickle", "load"), ("pickle", "loads"), ("marshal", "loads")}
_COPIES = {"copyfile", "copy", "copy2", "copytree", "copyfileobj"}


def _write_only(call: ast.Call) -> bool:
    """An open() whose mode (second argument or mode=) writes and does not read, or an os.open without
    O_RDONLY / O_RDWR."""
    text = ast.unparse(call)
    if "os.open(" in text or "os.fdopen(" in text:
        return "O_RDONLY" not in text and "O_RDWR" not in text and "'r" not in text
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "r" not in mode.value \
        and "+" not in mode.value


def _reads(path: Path):
    """(function, line, call text) of each call in a module that reads a file some other way."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    owner = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                owner[id(node)] = fn.name  # the innermost function: walked last
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        base = ast.unparse(f.value) if isinstance(f, ast.Attribute) else ""
        read = (name == "open" and base in ("", "os", "io", "codecs") and not _write_only(node)
                or name == "fdopen" and not _write_only(node)
                or name in ("read_text", "read_bytes") and isinstance(f, ast.Attribute) and base != "datafile"
                or name == "urlopen"
                or (base, name) in _LOADERS
                or base == "shutil" and name in _COPIES
                or name == "open" and base not in ("", "os", "io", "codecs", "CampaignState"))
        if read:
            yield owner.get(id(node), "<module>"), node.lineno, ast.unparse(node)[:120]


def test_no_file_is_read_but_through_the_one_loader():
    found, seen = [], set()
    for path in sorted((ROOT / "fuzz").rglob("*.py")) + sorted((ROOT / "strategies").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in THE_WAY:
            continue
        for fn, line, text in _reads(path):
            if (rel, fn) in NOT_DATA:
                seen.add((rel, fn))
            else:
                found.append(f"{rel}:{line} in {fn}: {text}")
    assert not found, "files read around fuzz/datafile.py (read them through it, or say why here):\n" + \
        "\n".join(found)
    assert seen == set(NOT_DATA), f"reasons for reads that are gone: {sorted(set(NOT_DATA) - seen)}"


def test_the_scan_finds_a_read_around_the_loader(tmp_path):
    """The scan itself: each way of reading a file that it must catch, caught."""
    src = tmp_path / "m.py"
    src.write_text("import json, os, pickle, shutil\nfrom pathlib import Path\n"
                   "def a(p):\n    return open(p).read()\n"
                   "def b(p):\n    return json.load(open(p, 'rb'))\n"
                   "def c(p):\n    return Path(p).read_text()\n"
                   "def d(p):\n    return pickle.loads(Path(p).read_bytes())\n"
                   "def e(p, q):\n    shutil.copyfile(p, q)\n"
                   "def f(p):\n    return os.fdopen(os.open(p, os.O_RDONLY)).read()\n"
                   "def g(p):\n    open(p, 'w').write('x')\n")  # a write: not a read
    assert sorted({fn for fn, _, _ in _reads(src)}) == ["a", "b", "c", "d", "e", "f"]
