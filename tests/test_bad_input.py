"""Every bad input is a clear error: each command, driven in a subprocess,
exits 2 with exactly one line on stderr and no traceback, before anything
runs, and leaves the state and corpus dirs as they were (or uncreated)."""

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.findings.store.corpus import Corpus
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Outcome, Verdict

from helpers import program

ROOT = Path(__file__).resolve().parent.parent
RELU = [("relu", ["x0"], {})]


def shapefuzz(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "fuzz", *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300, cwd=cwd or ROOT)


def snapshot(d: Path):
    """Every file under d with its bytes; None when d does not exist."""
    if not d.exists():
        return None
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def bad_input(r, *needles):
    """Exit 2, one line on stderr naming every needle, no traceback."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stdout[-1000:], r.stderr[-2000:])
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def no_cuda():
    import torch

    if torch.cuda.is_available():
        pytest.skip("checks a machine without CUDA")


def write_case(path: Path, p=None, d=None) -> Path:
    path.write_text(json.dumps(d if d is not None else (p or program(RELU, backend="eager")).to_dict()))
    return path


def make_entry(root: Path, device="cpu") -> Path:
    """A corpus entry with a hand-made verdict (nothing judged)."""
    p = program(RELU, backend="eager")
    p.settings.device = device
    v = Verdict(outcome=Outcome.DIVERGENCE, where="output 0", message="values mismatch")
    path, _ = Corpus(root).record(p, v, signature(v, p))
    return path


# -- run: options ------------------------------------------------------------------

RUN_OPTIONS = [
    (["--timeout", "-5"], ["--timeout", "positive"]),
    (["--timeout", "0"], ["--timeout", "positive"]),
    (["--max-cases", "-1"], ["--max-cases", ">= 1"]),
    (["--max-cases", "0"], ["--max-cases", ">= 1"]),
    (["--workers", "-1"], ["--workers", ">= 0"]),
    (["--workers", "two"], ["--workers", "not an integer"]),
    (["--workers-per-gpu", "0"], ["--workers-per-gpu"]),
    (["--max-findings", "0"], ["--max-findings"]),
    (["--max-ops", "0"], ["--max-ops"]),
    (["--time", "soon"], ["not a duration"]),
    (["--shrink-budget", "-1m"], ["--shrink-budget"]),
    (["--device", "banana"], ["unknown device 'banana'"]),
    (["--modes", "fastest"], ["unknown mode 'fastest'"]),
    (["--gpus", "0,zero"], ["--gpus"]),
    (["--gpus", "0"], ["--gpus applies to --device cuda only"]),
    (["--workers-per-gpu", "2"], ["--workers-per-gpu applies to --device cuda only"]),
    (["--backend", "nosuch"], ["unknown backend 'nosuch'"]),
    (["--no-such-flag"], ["unrecognized arguments"]),
    (["--ops", "mmm"], ["--ops: no op mmm"]),
    (["--families", "matrx"], ["--families: no family matrx", "matrix"]),
    (["--families", "matrix", "--ops", "relu"], ["share no op"]),
    (["--swarm", "--ops", "mm"], ["--swarm and --ops", "--ops names the menu"]),
    (["--swarm", "--pair-aimed"], ["--swarm and --pair-aimed"]),
    (["--draw", "blind", "--swarm"], ["--draw blind and --swarm are two ways to draw"]),
    (["--draw", "pair"], ["--draw", "invalid choice"]),
    (["--draw", "swarm", "--ops", "mm"], ["--swarm and --ops"]),
    (["--ops", "mm_int", "bmm_int", "--device", "cuda"], ["--ops: mm_int, bmm_int have no eager kernel on cuda"]),
    (["--ray", "headnode"], ["--ray headnode: not a cluster address", "HOST:PORT"]),
    (["--ray", "head:99999"], ["--ray head:99999: not a cluster address"]),
    (["--ray", "ray://head:10001"], ["Ray Client addresses are not supported"]),
    (["--ray", "local", "--workers", "0"], ["--workers 0", "of each node"]),
    (["--ray", "local", "--gpus", "0"], ["--gpus picks GPUs of this machine", "ray start --num-gpus"]),
]


@pytest.mark.parametrize("args,needles", RUN_OPTIONS, ids=[" ".join(a) for a, _ in RUN_OPTIONS])
def test_run_refuses_a_bad_option_before_writing_anything(tmp_path, args, needles):
    r = shapefuzz("run", "--backend", "eager", "--max-cases", "2", "--state", tmp_path / "st",
                  "--corpus", tmp_path / "corpus", *args)
    bad_input(r, *needles)
    assert not (tmp_path / "st").exists() and not (tmp_path / "corpus").exists()


def test_run_ray_without_the_extra_names_the_install(tmp_path):
    """A Python without Ray (here: a `ray` that fails to import, ahead on the path)."""
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = dict(os.environ, PYTHONPATH=f"{fake.parent}{os.pathsep}{ROOT}")
    r = subprocess.run([sys.executable, "-m", "fuzz", "run", "--backend", "eager", "--ray", "--state", tmp_path / "st",
                        "--corpus", tmp_path / "corpus"], capture_output=True, text=True, env=env, timeout=300,
                       cwd=ROOT)
    bad_input(r, "--ray needs Ray", "pip install -e '.[ray]'")
    assert not (tmp_path / "st").exists() and not (tmp_path / "corpus").exists()


def test_run_on_cuda_without_cuda_names_the_fix(tmp_path):
    no_cuda()
    r = shapefuzz("run", "--device", "cuda", "--state", tmp_path / "st", "--corpus", tmp_path / "corpus")
    bad_input(r, "no CUDA device", "--device cpu")
    assert not (tmp_path / "st").exists() and not (tmp_path / "corpus").exists()


def test_run_with_a_corrupt_known_issues_file_writes_nothing(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "known_issues.json").write_text("[{not json")
    before = snapshot(corpus)
    r = shapefuzz("run", "--backend", "eager", "--workers", "0", "--state", tmp_path / "st", "--corpus", corpus)
    bad_input(r, "known_issues.json")
    assert not (tmp_path / "st").exists() and snapshot(corpus) == before


@pytest.mark.parametrize("where", ["under a file", "in /proc", "read-only"])
def test_run_with_a_corpus_it_cannot_write_stops_at_start(tmp_path, where):
    if where == "under a file":
        (tmp_path / "file").write_text("")
        corpus = tmp_path / "file" / "corpus"
    elif where == "in /proc":
        corpus = Path("/proc/shapefuzz-test-corpus")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only directory")
        corpus = tmp_path / "ro"
        corpus.mkdir(mode=0o555)
    r = shapefuzz("run", "--backend", "eager", "--workers", "0", "--state", tmp_path / "st", "--corpus", corpus)
    bad_input(r, "corpus", "cannot be written")
    assert not (tmp_path / "st").exists()


# -- run: the state dir ----------------------------------------------------------

def run_state(tmp_path, *extra):
    return shapefuzz("run", "--backend", "eager", "--max-cases", "1", "--workers", "0", "--no-shrink", "--no-triage",
                     "--state", tmp_path / "st", "--corpus", tmp_path / "corpus", *extra)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """A finished one-case campaign's state dir, to copy and corrupt."""
    tmp = tmp_path_factory.mktemp("campaign")
    r = run_state(tmp)
    assert r.returncode == 0, r.stderr
    return tmp / "st"


def copy_state(campaign, tmp_path) -> Path:
    import shutil

    st = tmp_path / "st"
    shutil.copytree(campaign, st)
    return st


CORRUPTIONS = [
    ("config.json", lambda t: "{", "config.json is corrupt"),
    ("config.json", lambda t: "[1, 2]", "config.json is corrupt"),
    ("cases.jsonl", lambda t: "garbage\n" + t, "cases.jsonl: line 1"),
    ("cases.jsonl", lambda t: t + '{"i": "one"}\n', "cases.jsonl: line 2"),
    ("state.json", lambda t: t[: len(t) // 2], "state.json is corrupt"),
]


@pytest.mark.parametrize("name,corrupt,needle", CORRUPTIONS, ids=[f"{n}-{i}" for i, (n, _, _) in
                                                                   enumerate(CORRUPTIONS)])
def test_a_corrupt_state_file_is_reported_and_never_overwritten(campaign, tmp_path, name, corrupt, needle):
    st = copy_state(campaign, tmp_path)
    f = st / name
    f.write_text(corrupt(f.read_text()))
    before = snapshot(st)
    bad_input(run_state(tmp_path), needle)
    assert snapshot(st) == before
    assert not (tmp_path / "corpus").exists()
    bad_input(shapefuzz("stats", st), needle)
    assert snapshot(st) == before


def test_a_torn_last_line_is_not_corruption(campaign, tmp_path):
    """What kill -9 mid-append leaves: dropped, and cut on resume so the next line starts clean."""
    st = copy_state(campaign, tmp_path)
    with open(st / "cases.jsonl", "a") as f:
        f.write('{"i": 7, "outc')
    (st / "workers").mkdir(exist_ok=True)
    (st / "workers" / "blob").write_bytes(b"x" * 200_000)
    r = shapefuzz("stats", st, "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["cases"] == 1
    # the disk use: a worker cache's bytes are counted in it and in the state dir's
    assert s["disk"]["worker_caches_bytes"] >= 200_000 and s["disk"]["state_dir_bytes"] > s["disk"]["worker_caches_bytes"]
    assert s["disk"]["free_bytes"] > 0
    (st / "workers" / "blob").unlink()
    r = run_state(tmp_path, "--max-cases", "2")
    assert r.returncode == 0, r.stderr
    assert [json.loads(line)["i"] for line in (st / "cases.jsonl").read_text().splitlines()] == [0, 1]


JOB = '{"job": "shrink:aaaaaaaaaaaa", "event": "queued", "type": "shrink", "entry": "aaaaaaaaaaaa", "time": 1.0}\n'


@pytest.mark.parametrize("garbage,line", [("garbage\n", 1), ('{"job": "shrink:aaaaaaaaaaaa"}\n', 1),
                                          ("[1, 2]\n", 1), (JOB + "{}\n", 2)], ids=["text", "fields", "list", "{}"])
def test_a_corrupt_jobs_log_is_reported_and_never_overwritten(campaign, tmp_path, garbage, line):
    st = copy_state(campaign, tmp_path)
    (st / "jobs.jsonl").write_text(garbage + JOB)
    before = snapshot(st)
    bad_input(shapefuzz("stats", st), "jobs.jsonl", f"line {line}", "corrupt")
    bad_input(run_state(tmp_path), "jobs.jsonl", f"line {line}")
    bad_input(shapefuzz("followup", st), "jobs.jsonl", f"line {line}")
    assert snapshot(st) == before and not (tmp_path / "corpus").exists()


def test_a_torn_line_of_the_jobs_log_is_not_corruption(campaign, tmp_path):
    """A kill mid-append leaves the start of a record; the next append closes it with a newline."""
    st = copy_state(campaign, tmp_path)
    (st / "jobs.jsonl").write_text('{"job": "shrink:aa\n' + JOB + '{"jo')
    r = shapefuzz("stats", st, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["followups"]["pending"] == 1


def test_a_hit_on_an_entry_with_a_corrupt_meta_leaves_it_alone(tmp_path):
    """The finding is recorded in the campaign's state; the entry's meta.json is reported, not replaced."""
    def run(st):
        # seed 0: its first 4 cases give a new entry (the stream moves with the generator: seed 2's gave none
        # once the unbacked sizes and rare conjunctions were drawn)
        return shapefuzz("run", "--backend", "fuzz.planted:corrupt_large", "--max-cases", "4", "--seed", "0",
                         "--workers", "0", "--no-shrink", "--no-triage", "--state", tmp_path / st,
                         "--corpus", tmp_path / "corpus")

    first = run("st1")
    entries = sorted((tmp_path / "corpus").iterdir())
    assert first.returncode == 1 and entries, first.stdout[-2000:] + first.stderr[-2000:]
    meta = entries[0] / "meta.json"
    meta.write_text('{"hits": 7, "first_se')
    before = snapshot(entries[0])
    again = run("st2")  # the same cases: hits on the same entries
    assert again.returncode == 1, again.stdout[-2000:] + again.stderr[-2000:]
    assert {k: v for k, v in snapshot(entries[0]).items() if k != ".lock"} == before  # the hit's lock aside
    assert f"warning: {entries[0]}: meta.json is unreadable" in again.stdout
    assert again.stdout.count("meta.json is unreadable") == 1 and "Traceback" not in again.stderr
    findings = [json.loads(line) for line in (tmp_path / "st2" / "findings.jsonl").read_text().splitlines()]
    assert entries[0].name in [f["key"] for f in findings]


def test_a_second_run_on_a_state_dir_in_use_is_refused(campaign, tmp_path):
    st = copy_state(campaign, tmp_path)
    with open(st / "lock", "w") as lock:  # as a live run holds it
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.write("4242\n")
        lock.flush()
        before = snapshot(st)
        bad_input(run_state(tmp_path, "--max-cases", "3"), f"state dir {st} is in use by pid 4242")
        assert snapshot(st) == before
    r = run_state(tmp_path, "--max-cases", "2")  # released: it runs
    assert r.returncode == 0, r.stderr


def test_stats_of_what_is_not_a_state_dir(tmp_path):
    bad_input(shapefuzz("stats", tmp_path / "nope"), "not a campaign state dir")
    bad_input(shapefuzz("stats", tmp_path), "not a campaign state dir")


# -- check and repro: case files ---------------------------------------------------------

def huge(shape, sizes=None):
    p = program(RELU, backend="eager").to_dict()
    p["inputs"][0]["shape"] = shape
    p["sizes"] = sizes or p["sizes"]
    return p


CASES = [
    (huge([2] * 64), ["inputs[0].shape", "at most 8 items, got 64", "rank limit is 8"]),
    (huge([100000] * 3), ["1000000000000000 elements", "2**24"]),
    (huge([100000.0] * 3), ["inputs[0].shape[0]", "integer", "100000.0"]),
    (huge(["s0"] * 3, {"s0": [100000.0] * 3}), ["sizes.s0[0]", "must be integer"]),
    (huge(["s0"] * 3, {"s0": [3, 5000, 4]}), ["at call 1", "2**24"]),
    ({"outcome": "divergence", "stage": "compare", "where": "output 0"}, ["not a program", "verdict"]),
    ({"key": "abc", "text": "divergence"}, ["not a program", "signature"]),
    ({**program(RELU).to_dict(), "settings": {"device": "banana"}}, ['"banana" is not a device']),
    ({**program(RELU).to_dict(), "settings": {"dynamic": "yes"}}, ["dynamic"]),
    ({**program(RELU).to_dict(), "outputs": [["v0"]]}, ["outputs"]),
    ({**program(RELU).to_dict(), "sizes": {"s0": [3] * 100}}, ["sizes.s0", "got 100", "limit is 64 calls"]),
]


@pytest.mark.parametrize("case,needles", CASES, ids=[str(i) for i in range(len(CASES))])
def test_check_refuses_a_bad_case_before_running_it(tmp_path, case, needles):
    path = write_case(tmp_path / "case.json", d=case)
    bad_input(shapefuzz("check", path), str(path), *needles)
    bad_input(shapefuzz("check", path, "--in-process"), *needles)
    bad_input(shapefuzz("repro", path), *needles)


def test_the_generator_stays_within_the_limits():
    from fuzz.program.ir import MAX_CALLS, MAX_ELEMENTS, MAX_RANK
    from fuzz.program.typecheck import typecheck
    from helpers import draw_programs
    from strategies import programs

    for p in draw_programs(150, seed=5, max_ops=6):
        for v in typecheck(p).values():  # typecheck itself refuses anything past the limits
            assert v.rank <= MAX_RANK and p.calls <= MAX_CALLS
            assert all(eval("*".join(str(d.values[c]) for d in v.shape) or "1") <= MAX_ELEMENTS
                       for c in range(v.calls))
    with pytest.raises(Exception, match="max_rank"):
        programs(max_rank=MAX_RANK + 1).example()


@pytest.mark.parametrize("args,needles", [
    (["--timeout", "-5"], ["--timeout", "positive"]),
    (["--device", "banana"], ["unknown device"]),
    (["--backend", "nosuch"], ["unknown backend"]),
    (["--device", "cuda"], ["no CUDA device", "--device cpu"]),
])
def test_check_refuses_a_bad_option(tmp_path, args, needles):
    if args == ["--device", "cuda"]:
        no_cuda()
    bad_input(shapefuzz("check", write_case(tmp_path / "case.json"), *args), *needles)


def test_check_of_a_cuda_entry_here_names_the_fix(tmp_path):
    no_cuda()
    cuda = [d for d in sorted((ROOT / "corpus").iterdir())
            if (d / "program.json").is_file() and '"cuda' in (d / "program.json").read_text()]
    if not cuda:
        pytest.skip("the corpus has no CUDA entry")
    bad_input(shapefuzz("check", cuda[0] / "program.json"), "no CUDA device", "--device cpu")
    bad_input(shapefuzz("check", cuda[0]), "is a directory", "program.json")


# -- entries: shrink, report, triage ------------------------------------------------------

ENTRY_DAMAGE = [
    (lambda e: (e / "verdict.json").write_text("{broken"), "verdict.json: not valid JSON"),
    (lambda e: (e / "meta.json").unlink(), "missing meta.json"),
    (lambda e: (e / "program.json").write_text(json.dumps(huge([2] * 10))), "rank limit is 8"),
]


@pytest.mark.parametrize("damage,needle", ENTRY_DAMAGE, ids=["verdict", "meta", "rank"])
@pytest.mark.parametrize("command", ["shrink", "report", "triage"])
def test_a_corrupt_entry_is_reported_and_left_alone(tmp_path, command, damage, needle):
    entry = make_entry(tmp_path / "corpus")
    damage(entry)
    before = snapshot(tmp_path / "corpus")
    extra = ["--write"] if command == "report" else []
    bad_input(shapefuzz(command, entry, *extra), str(entry), needle)
    assert snapshot(tmp_path / "corpus") == before


def copy_entry(tmp_path, key) -> Path:
    """A corpus entry of the repo's corpus, copied into a corpus of its own."""
    import shutil

    if not (ROOT / "corpus" / key).is_dir():
        pytest.skip(f"the corpus has no entry {key}")
    return Path(shutil.copytree(ROOT / "corpus" / key, tmp_path / "corpus" / key))


def test_triage_of_a_cuda_entry_here_names_the_fix(tmp_path):
    """Not an ablation.json of "Torch not compiled with CUDA enabled" rows over the entry's own."""
    no_cuda()
    entry = copy_entry(tmp_path, "bf0b1a593cf5")  # a CUDA entry
    before = snapshot(tmp_path / "corpus")
    bad_input(shapefuzz("triage", entry), "a program for cuda", "no CUDA device", "run it on a GPU machine")
    assert snapshot(tmp_path / "corpus") == before


def test_shrink_of_an_entry_this_machine_cannot_run_names_the_fix(tmp_path):
    """As shrink of a case file: not a misleading 'not reproduced' (CUDA) or an unprefixed line (torch_xla)."""
    import importlib.util

    no_cuda()
    entry = copy_entry(tmp_path, "bf0b1a593cf5")  # a CUDA entry
    before = snapshot(tmp_path / "corpus")
    bad_input(shapefuzz("shrink", entry, "--time-budget", "5"), "shapefuzz: a program for cuda", "no CUDA device",
              "--device cpu")
    assert snapshot(tmp_path / "corpus") == before
    if importlib.util.find_spec("torch_xla") is not None:
        return
    entry = copy_entry(tmp_path, "7d5fab503523")  # a torch_xla step-program entry
    before = snapshot(tmp_path / "corpus")
    bad_input(shapefuzz("shrink", entry, "--time-budget", "5"), "shapefuzz: backend 'xla' needs torch_xla",
              ".venv-xla/bin/python")
    assert snapshot(tmp_path / "corpus") == before


@pytest.mark.parametrize("command", ["shrink", "report", "triage"])
def test_a_dir_that_is_not_an_entry(tmp_path, command):
    (tmp_path / "notes.txt").write_text("hello")
    before = snapshot(tmp_path)
    bad_input(shapefuzz(command, tmp_path), "not a corpus entry")
    assert snapshot(tmp_path) == before


def test_replay_options(tmp_path):
    bad_input(shapefuzz("replay", tmp_path, "--jobs", "0"), "--jobs")
    bad_input(shapefuzz("replay", tmp_path / "nope"), "no corpus directory")
