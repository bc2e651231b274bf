"""The corpus: atomic entries, one per signature, hit counts that survive concurrency."""

import json
import multiprocessing as mp
import platform

import pytest

import fuzz.findings.store.corpus as corpus_mod
import fuzz.findings.store.scripts as scripts_mod
from fuzz.findings.store.corpus import FILES, Corpus, CorpusError, capture_env
from fuzz.program.ir import OpCall, Program, TensorInput
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Outcome, Stage, Verdict

SEED = ("setStorage: sizes [2304], strides [1], storage offset 0, and itemsize 4 requiring a storage size "
        "of 9216 are out of bounds for storage of size 8704")
ENV = {"torch": "2.13.0", "python": "3.12.0", "gpu": None}


def make_program(op="relu", sizes=(4, 5, 6)):
    return Program(sizes={"s0": list(sizes)}, inputs=[TensorInput(name="x0", shape=["s0"], marks=["dynamic"])],
                   ops=[OpCall(op=op, args=["x0"], params={}, out="v0")], outputs=["v0"])


def make_verdict(message=SEED):
    return Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE, call=1, sizes={"s0": 5},
                   exc_type="RuntimeError", message=message,
                   frames=["/x/site-packages/torch/_inductor/runtime/triton_heuristics.py:9:clone_preserve_strides"])


def record(c, message=SEED, op="relu", sizes=(4, 5, 6)):
    v = make_verdict(message)
    p = make_program(op, sizes)
    return c.record(p, v, signature(v, p), env=ENV)


def hidden(root):
    return [p for p in root.rglob(".*") if p.name != ".lock"]


def test_record_writes_a_complete_entry(tmp_path):
    c = Corpus(tmp_path / "corpus")
    path, new = record(c)
    assert new and path.parent == c.root
    assert sorted(f.name for f in path.iterdir() if not f.name.startswith(".")) == sorted(FILES)  # no harness.py
    e = c.load(path)
    assert e.program == make_program() and e.verdict == make_verdict()
    assert e.key == path.name and e.hits == 1 and e.env == ENV
    assert e.meta["first_seen"] == e.meta["last_seen"] and e.meta["first_seen"].endswith("+00:00")
    assert "setStorage" in e.signature.text
    repro = (path / "repro.py").read_text()
    assert e.key in repro.splitlines()[0] and "import torch" in repro
    compile(repro, "repro.py", "exec")
    assert hidden(c.root) == []  # no temp files or dirs left behind


def test_same_bug_dedupes_and_counts_hits(tmp_path):
    c = Corpus(tmp_path)
    first, new1 = record(c, sizes=(4, 5, 6))
    again, new2 = record(c, SEED.replace("2304", "4096").replace("8704", "16000"), sizes=(7, 8, 9))
    assert (new1, new2) == (True, False) and first == again
    e = c.load(first)
    assert e.hits == 2 and e.meta["last_seen"] >= e.meta["first_seen"]
    assert e.program.sizes == {"s0": [4, 5, 6]}  # the first program is kept
    other, new3 = record(c, "CUDA error: an illegal memory access was encountered")
    assert new3 and other != first
    assert [x.key for x in c.entries()] == sorted([first.name, other.name]) and c.errors == []


def test_failed_record_leaves_nothing_behind(tmp_path, monkeypatch):
    c = Corpus(tmp_path)

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(corpus_mod, "_fsync_dir", boom)
    with pytest.raises(OSError):
        record(c)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    path, new = record(c)
    assert new and c.load(path).hits == 1


def test_codegen_failure_still_records(tmp_path, monkeypatch):
    def broken(program, title=""):
        raise ValueError("cannot print op 'relu'")

    monkeypatch.setattr(scripts_mod, "repro_source", broken)
    c = Corpus(tmp_path)
    path, new = record(c)
    assert new and "cannot print op" in c.load(path).meta["repro_error"]
    repro = (path / "repro.py").read_text()
    compile(repro, "repro.py", "exec")
    assert "sys.exit(" in repro


def test_losing_the_creation_race_counts_a_hit(tmp_path, monkeypatch):
    c = Corpus(tmp_path)
    path, _ = record(c)

    class Late(type(path)):  # looks absent, as when checked just before another process renamed it in
        def is_dir(self):
            return False

    monkeypatch.setattr(Corpus, "path_of", lambda self, key: Late(self.root / key))
    again, new = record(c)
    assert (again, new) == (path, False)
    assert c.load(path).hits == 2 and hidden(tmp_path) == []


def _record_many(root, n, barrier):
    c = Corpus(root)
    barrier.wait()
    created = 0
    for i in range(n):
        _, new = record(c, SEED.replace("2304", str(2304 + i)), sizes=(4 + i, 5, 6))
        created += new
    return created


def test_concurrent_processes_make_one_entry_with_every_hit(tmp_path):
    procs, per = 4, 15
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(procs)
        with ctx.Pool(procs) as pool:
            created = pool.starmap(_record_many, [(str(tmp_path), per, barrier)] * procs)
    assert sum(created) == 1
    entries = [p for p in tmp_path.iterdir()]
    assert len(entries) == 1, entries
    c = Corpus(tmp_path)
    (e,) = list(c.entries())
    assert e.hits == procs * per and c.errors == []
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("damage,complaint", [
    (lambda d: (d / "verdict.json").write_text("{not json"), "verdict.json: not valid JSON"),
    (lambda d: (d / "meta.json").unlink(), "missing meta.json"),
    (lambda d: (d / "program.json").write_text((d / "program.json").read_text().replace('"relu"', '"nope"')),
     "program.json: ops[0]: unknown op 'nope'"),
    (lambda d: (d / "program.json").write_text('{"schema": 99}'), "program.json: schema version 99"),
    (lambda d: (d / "verdict.json").write_text('{"outcome": "exploded"}'), "verdict.json: outcome: must be one of"),
    (lambda d: (d / "signature.json").write_text(json.dumps({"key": d.name, "text": "edited"})),
     "text does not hash to key"),
    (lambda d: (d / "meta.json").write_text('{"hits": 0, "first_seen": "x", "last_seen": "x"}'),
     "meta.json: hits: must be >= 1"),
    (lambda d: (d / "meta.json").write_text('{"hits": 3, "first_seen": "yesterday", "last_seen": "x"}'),
     "meta.json: first_seen: \"yesterday\" is not an ISO date"),
    (lambda d: (d / "env.json").write_text("[]"), "env.json: must be object, got array"),
])
def test_corrupted_entry_is_reported_and_skipped(tmp_path, damage, complaint):
    c = Corpus(tmp_path)
    good, _ = record(c, "some other error")
    bad, _ = record(c)
    damage(bad)
    assert [e.path for e in c.entries()] == [good]
    assert len(c.errors) == 1 and c.errors[0].path == bad
    assert complaint in str(c.errors[0]) and str(bad) in str(c.errors[0])
    with pytest.raises(CorpusError, match="^" + str(bad)):
        c.load(bad)


def test_renamed_entry_and_stray_files(tmp_path):
    c = Corpus(tmp_path)
    path, _ = record(c)
    path.rename(tmp_path / "renamed")
    (tmp_path / "known_issues.json").write_text("[]")
    (tmp_path / ".tmp-abc-123").mkdir()  # a record in flight elsewhere
    assert list(c.entries()) == []
    assert len(c.errors) == 1 and "does not match the directory name" in str(c.errors[0])
    assert list(Corpus(tmp_path / "absent").entries()) == []


def test_a_hit_leaves_a_broken_meta_as_it_is(tmp_path):
    """A fresh meta.json would lose the entry's hits, variants, shrink and origin: reported, never rewritten."""
    c = Corpus(tmp_path)
    path, _ = record(c)
    (path / "meta.json").write_text("garbage")
    assert record(c) == (path, False)
    assert (path / "meta.json").read_bytes() == b"garbage"
    assert "meta.json is unreadable" in str(c.uncounted[path])


def test_env_is_captured(tmp_path):
    import torch
    env = capture_env()
    assert env["torch"] == torch.__version__
    assert env["python"] == platform.python_version()
    assert env["os"] == platform.platform()
    assert env["cuda"] == torch.version.cuda
    assert ("gpu" in env) and (env["gpu"] is None) == (not torch.cuda.is_available())
    assert "triton" in env and "torch_xla" in env
    c = Corpus(tmp_path)
    v = make_verdict()
    path, _ = c.record(make_program(), v, signature(v))  # no env given: captured
    assert json.loads((path / "env.json").read_text()) == json.loads(json.dumps(env))


def test_update_shrunk_replaces_the_program_and_keeps_the_first(tmp_path, monkeypatch):
    c = Corpus(tmp_path)
    path, _ = record(c, sizes=(4, 5, 6))
    small = make_program(sizes=(5,))
    e = c.update_shrunk(path, small, make_verdict(), {"ops_after": 1})
    assert e.key == path.name and e.program == small and e.hits == 1
    assert e.meta["shrink"]["ops_after"] == 1 and e.meta["shrink"]["at"].endswith("+00:00")
    assert Program.from_json((path / "original_program.json").read_text()) == make_program(sizes=(4, 5, 6))
    assert json.loads((path / "signature.json").read_text())["key"] == path.name  # the key stays
    # a second shrink keeps the first original; a codegen failure is recorded, then cleared
    monkeypatch.setattr(scripts_mod, "repro_source", lambda p, title="": 1 / 0)
    e = c.update_shrunk(path, make_program(sizes=(7,)), make_verdict(), {"ops_after": 1})
    assert "ZeroDivisionError" in e.meta["repro_error"]
    monkeypatch.undo()
    e = c.update_shrunk(path, make_program(sizes=(7,)), make_verdict(), {})
    assert "repro_error" not in e.meta and e.program.sizes == {"s0": [7]}
    assert Program.from_json((path / "original_program.json").read_text()) == make_program(sizes=(4, 5, 6))
    record(c)  # a hit after the update keeps the shrink record
    assert c.load(path).hits == 2 and c.load(path).meta["shrink"] == {"at": e.meta["shrink"]["at"]}
    assert hidden(tmp_path) == [] and all((path / f).stat().st_mode & 0o777 == 0o644 for f in FILES)


# -- re-keying and merging ------------------------------------------------------------

def value_verdict(where="output 0"):
    return Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=1, sizes={"s0": 5}, where=where)


def two_op_program(op2, sizes=(4, 5, 6)):
    return Program(sizes={"s0": list(sizes)}, inputs=[TensorInput(name="x0", shape=["s0"], marks=["dynamic"])],
                   ops=[OpCall(op="relu", args=["x0"], params={}, out="v0"),
                        OpCall(op=op2, args=["v0"], params={}, out="v1")], outputs=["v1"])


def found_and_shrunk(c, op2, sizes=(4, 5, 6), small_sizes=(9,)):
    """An entry as a campaign makes it, then shrunk to a one-op program."""
    from fuzz.findings.signature import minimal_signature

    p, v = two_op_program(op2, sizes), value_verdict()
    path, new = c.record(p, v, signature(v, p), env=ENV)
    assert new
    small = make_program("nan_to_num", small_sizes)
    c.update_shrunk(path, small, value_verdict(), {"ops_after": 1})
    return path, p, minimal_signature(value_verdict(), small)


def test_old_entries_read_as_their_own_single_variant(tmp_path):
    c = Corpus(tmp_path)
    path, _ = record(c)
    e = c.load(path)
    assert not e.minimal and not e.shrunk and e.bucket == e.signature
    assert e.variants == {e.key: {"text": e.signature.text, "hits": 1, "first_seen": e.meta["first_seen"],
                                  "last_seen": e.meta["last_seen"]}}
    assert c.resolve(e.key) == path and c.resolve("0" * 12) is None and c.index() == {}


def test_rekey_moves_an_entry_and_later_hits_follow_it(tmp_path):
    c = Corpus(tmp_path)
    a, p_a, m = found_and_shrunk(c, "exp")
    key_a = a.name
    new = c.rekey(a, m)
    assert new == tmp_path / m.key and not a.exists()
    e = c.load(new)
    assert e.minimal and e.key == m.key and e.hits == 1 and e.shrunk
    assert set(e.variants) == {key_a} and e.variants[key_a]["hits"] == 1
    assert Program.from_json((new / "variants" / key_a / "program.json").read_text()) == p_a  # as found
    assert json.loads((new / "variants" / key_a / "verdict.json").read_text()) == value_verdict().to_dict()
    assert e.bucket == signature(e.verdict, e.program) and m.key in (new / "repro.py").read_text()
    assert c.index() == {key_a: m.key} and c.resolve(key_a) == new
    # the same provisional key again: a hit on the re-keyed entry, not a new entry
    p, v = two_op_program("exp", (7, 8, 9)), value_verdict()
    path, is_new = c.record(p, v, signature(v, p), env=ENV)
    assert (path, is_new) == (new, False)
    e = c.load(new)
    assert e.hits == 2 and e.variants[key_a]["hits"] == 2
    assert [x.key for x in c.entries()] == [m.key] and c.errors == []
    assert c.rekey(new, m) == new  # already there: nothing moves


def test_merge_sums_hits_keeps_variants_and_the_smallest_program(tmp_path):
    c = Corpus(tmp_path)
    a, p_a, m = found_and_shrunk(c, "exp", small_sizes=(9, 10, 11))
    c._hit(a, a.name)  # a has 2 hits
    b, p_b, m_b = found_and_shrunk(c, "sum", small_sizes=(9,))
    assert m_b == m and a.name != b.name  # two provisional keys, one minimal program
    key_a, key_b = a.name, b.name
    first_a = c.load(a).meta["first_seen"]
    c.rekey(a, m)
    merged = c.rekey(b, m)
    e = c.load(merged)
    assert e.hits == 3 and set(e.variants) == {key_a, key_b}
    assert (e.variants[key_a]["hits"], e.variants[key_b]["hits"]) == (2, 1)
    assert e.meta["first_seen"] == first_a and e.meta["last_seen"] >= first_a
    assert e.program.sizes == {"s0": [9]}  # b's shrunk program is smaller: the representative
    assert Program.from_json((merged / "variants" / key_b / "program.json").read_text()) == p_b
    assert Program.from_json((merged / "variants" / key_a / "program.json").read_text()) == p_a
    assert c.index() == {key_a: m.key, key_b: m.key}
    assert [x.key for x in c.entries()] == [m.key] and c.errors == []
    assert [p for p in hidden(tmp_path) if p.name not in (".index.lock", ".index.json")] == []


def test_a_merge_cut_short_is_finished_without_counting_twice(tmp_path):
    c = Corpus(tmp_path)
    a, _, m = found_and_shrunk(c, "exp")
    c._hit(a, a.name)
    src = c.load(a)
    c._create_from(src, m)  # killed here: both directories exist, nothing indexed
    c._merge_into(src, c.load(tmp_path / m.key), lambda p: len(p.to_json()))  # ... or here
    assert c.resolve(a.name) == a  # hits still land on the old entry until the index says otherwise
    c._hit(a, a.name)
    merged = c.rekey(a, m)  # the follow-up job runs again
    e = c.load(merged)
    assert e.hits == 3 and e.variants[a.name]["hits"] == 3 and not a.exists()
    assert [x.key for x in c.entries()] == [m.key]


def test_a_hit_on_an_entry_merged_meanwhile_lands_on_the_merged_entry(tmp_path):
    c = Corpus(tmp_path)
    a, _, m = found_and_shrunk(c, "exp")
    stale = c.resolve(a.name)
    merged = c.rekey(a, m)
    assert c._hit(stale, a.name) == merged and c.load(merged).hits == 2


def test_a_re_keyed_entry_merges_whole_into_another(tmp_path):
    # e.g. `shapefuzz dedupe --reshrink`: an entry shrunk again lands on another minimal key
    from fuzz.findings.signature import minimal_signature

    c = Corpus(tmp_path)
    a, p_a, m = found_and_shrunk(c, "exp")
    b, p_b, _ = found_and_shrunk(c, "sum")
    key_a, key_b = a.name, b.name
    other = minimal_signature(value_verdict("input x0"), make_program("nan_to_num", (9,)))
    first = c.rekey(a, other)  # a first lands elsewhere
    c.record(p_a, value_verdict(), signature(value_verdict(), p_a))  # a hit through the index
    merged_b = c.rekey(b, m)
    final = c.rekey(first, m)  # ... and then moves to m, with its variants and hits
    assert final == merged_b and not first.exists()
    e = c.load(final)
    assert sorted(e.variants) == sorted([key_a, key_b]) and e.hits == 3 and e.variants[key_a]["hits"] == 2
    assert Program.from_json((final / "variants" / key_a / "program.json").read_text()) == p_a
    assert c.index() == {key_a: m.key, key_b: m.key, other.key: m.key}
    assert [x.key for x in c.entries()] == [m.key]
