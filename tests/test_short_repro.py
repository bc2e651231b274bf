"""Short repros (fuzz/program/short_repro.py): for every op family and every
outcome a short form shows, the script compiles, stays within 30 code lines,
and run standalone in a fresh process exits 1 and fails the way the finding
did; a correct backend's program gives no failure to show. The short forms of
the shipped corpus's programs are at most 30 code lines, 14 at the median,
without harness helpers."""

import py_compile
import re
import statistics

import pytest

from fuzz.judge.runner import run_case
from fuzz.program.opspec import FAMILIES
from fuzz.program.short_repro import check_short_repro, code_lines, failure_matches, short_repro_source, supported

from helpers import draw_programs, program, scripts_in_a_zygote

MAX_LINES = 30
MEDIAN_LINES = 14
HARNESS = re.compile(r"\bmake\(|make_inputs|Generator\(|DEVICE\b")


def _short(p, tmp_path):
    v = run_case(p)
    assert v.is_finding, v.summary()
    src = short_repro_source(p, v, "test")
    assert src is not None, supported(p, v)
    path = tmp_path / "repro.py"
    path.write_text(src)
    py_compile.compile(str(path), doraise=True)
    assert code_lines(src) <= MAX_LINES, src
    return src, v


def _finding_of_family(family):
    """A drawn program of `family` that the always-wrong backend makes a finding with a short form."""
    for p in draw_programs(12, seed=3, families=(family,), backend="tests.planted_extra:corrupt_always", max_ops=3):
        if not any(c.op for c in p.ops):
            continue
        v = run_case(p)
        if v.is_finding and supported(p, v) is None:
            return p
    pytest.fail(f"no drawn {family} program gave a finding with a short form")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_short_repro_of_every_op_family_fails_standalone(family, tmp_path):
    p = _finding_of_family(family)
    src, v = _short(p, tmp_path)
    ok, shown, _ = check_short_repro(src, v, timeout=300)
    assert ok, (shown, src)


CASES = {  # planted backend -> (program, outcome it shows as)
    "fuzz.planted:corrupt_large": (program([("relu", ["x0"], {})], marks=["dynamic"]), "divergence"),
    "fuzz.planted:storage_error_on_pad": (program([("pad", ["x0"], {"mode": "constant", "pad": [1, 2],
                                                                     "value": 0.0})]), "compiled-only-error"),
    "fuzz.planted:wrong_strides": (program([("relu", ["x0"], {})], shape=("s0", 4), sizes={"s0": [3]}),
                                   "stride-mismatch"),
    "fuzz.planted:mutate_input": (program([("relu", ["x0"], {})]), "input-mutation-mismatch"),
}


@pytest.mark.parametrize("backend", sorted(CASES))
def test_each_outcome_a_short_repro_shows(backend, tmp_path):
    p, outcome = CASES[backend]
    p.settings.backend = backend
    src, v = _short(p, tmp_path)
    assert v.outcome.value == outcome
    ok, shown, _ = check_short_repro(src, v, timeout=300)
    assert ok, (shown, src)
    # the same script under a correct backend passes: the check is the bug, not the script
    fixed = src.replace(repr(backend.split(":")[0]), "'fuzz.planted'").replace(repr(backend.split(":")[1]),
                                                                               "'passthrough'")
    ok, shown, _ = check_short_repro(fixed, v, timeout=300)
    assert not ok and shown == "it passed (exit 0)", shown


def test_a_failure_of_another_kind_does_not_match():
    from fuzz.judge.verdict import Outcome, Verdict

    v = Verdict(outcome=Outcome.COMPILED_ERROR, exc_type="RuntimeError", message="setStorage: sizes [3] out of bounds")
    assert failure_matches(v, 1, "", "Traceback\nRuntimeError: setStorage: sizes [9] out of bounds\n")[0]
    assert not failure_matches(v, 1, "", "Traceback\nValueError: setStorage: sizes [9] out of bounds\n")[0]
    assert not failure_matches(v, 1, "", "Traceback\nRuntimeError: CUDA error\n")[0]
    assert not failure_matches(v, 0, "OK", "")[0]
    assert not failure_matches(v, None, "", "")[0]
    d = Verdict(outcome=Outcome.DIVERGENCE, where="output 0")
    assert failure_matches(d, 1, "", "AssertionError: compiled vs eager, divergence at output 0: not close")[0]
    assert not failure_matches(d, 1, "", "AssertionError: compiled vs eager, stride-mismatch at output 0: x")[0]


def _corpus_entries():
    from pathlib import Path

    from fuzz.findings.store.corpus import Corpus

    root = Path(__file__).resolve().parent.parent / "corpus"
    return [e for e in Corpus(root).entries() if e.program.device_type() != "xla"]


def _generated(e):
    """The entry's scripts as this generator writes them (a CPU repro where its CPU twin or its triage
    reproduced it on CPU: scripts.entry_repro_device)."""
    from fuzz.findings.store.scripts import entry_repro_device, entry_scripts

    return entry_scripts(e.program, e.verdict, e.signature, device=entry_repro_device(e.path, e.program))


def test_the_short_repros_of_the_shipped_programs_are_short_and_plain():
    entries = _corpus_entries()
    lines = {}
    for e in entries:
        scripts, info = _generated(e)
        src = scripts["repro.py"]
        assert "lines" in info["short_repro"], (e.key, info)
        assert not HARNESS.search(src), (e.key, HARNESS.search(src), src)
        compile(src, "repro.py", "exec")
        lines[e.key] = code_lines(src)
    assert max(lines.values()) <= MAX_LINES, lines
    assert statistics.median(lines.values()) <= MEDIAN_LINES, lines


def test_every_corpus_entry_has_a_short_repro_that_is_its_own_and_inlined_in_its_report():
    from fuzz.devices import missing
    from fuzz.findings.store.scripts import _digest

    entries = _corpus_entries()
    assert entries
    for e in entries:
        info = e.meta.get("short_repro") or {}
        stored = (e.path / "repro.py").read_text()
        if "lines" not in info:  # its short form did not fail standalone where it was checked: the note
            assert info.get("full_harness") and "--harness" in stored and len(stored.splitlines()) < 15, e.key
            continue
        assert 0 < info.get("lines", 0) and code_lines(stored) == info["lines"], (e.key, info)
        assert info.get("script") == _digest(stored), f"{e.key}: meta.json describes another repro.py"
        assert info.get("reproduces") is True and info.get("checked"), (e.key, info)  # run standalone once
        scripts, _ = _generated(e)
        if stored != scripts["repro.py"]:
            # an older generator's short form, checked where it ran, is kept until its device re-checks a new one
            assert "'cuda'" in stored and missing("cuda"), f"{e.key}: repro.py is stale (shapefuzz repro corpus/)"
        body = stored.split('"""', 2)[2].strip()  # the report swaps the docstring's first line only
        assert body in (e.path / "report.md").read_text(), f"{e.key}: report.md does not inline its repro"


def test_a_recompile_is_shown_with_error_on_recompile(tmp_path):
    from fuzz.judge.verdict import Outcome, Stage, Verdict

    p = program([("relu", ["x0"], {})], sizes={"s0": [3, 4]})
    p.settings.dynamic = False  # a new size is a new graph
    v = Verdict(outcome=Outcome.RECOMPILE, stage=Stage.COMPILE, call=1, sizes={"s0": 4}, where="graphs",
                message="1 new graph(s) ...; failed guard: L['x0'].size()[0] == 3")
    src = short_repro_source(p, v, "test")
    assert "torch._dynamo.config.error_on_recompile = True" in src and not HARNESS.search(src), src
    assert src.index("error_on_recompile") > src.index("torch.randn(3)") and src.rstrip().endswith("compiled(x0)")
    ok, shown, _ = check_short_repro(src, v, timeout=300)
    assert ok, (shown, src)
    assert not failure_matches(v, 1, "", "Traceback\nAssertionError: compiled vs eager, divergence at output 0")[0]


def _recorded_result(e, release: str) -> str | None:
    """What `shapefuzz versions` recorded for the entry's stored CPU repro on `release` (a CUDA entry
    whose repro.py runs on CPU: its CPU twin's record): "affected", "passes", or None where it never ran."""
    rec = e.meta.get("versions") if isinstance(e.meta.get("versions"), dict) else {}
    part = rec if e.program.device_type() == "cpu" else rec.get("cpu") if isinstance(rec.get("cpu"), dict) else {}
    got = (part.get("releases") or {}).get(release)
    return got.get("result") if isinstance(got, dict) and got.get("result") in ("affected", "passes") else None


def test_the_cpu_corpus_entries_do_here_what_their_records_say():
    """Every CPU short repro of the shipped corpus does on this torch what its versions record says it does
    on this release: fails as its finding did where "affected", exits 0 where "passes" (a bug the release
    fixed). Which bugs a release has is a recorded result (`shapefuzz versions corpus --torch newest`), not
    this test's to assume; an entry with no record for this release is not judged here. An entry whose
    short_repro record says it ran this very script on this torch and failed as found runs only when drawn
    into the day's sample of three, which keeps the records honest; `shapefuzz repro corpus --check` runs
    every one."""
    import datetime
    import hashlib
    import random

    import torch

    from fuzz.judge.isolated import run_script

    release = torch.__version__.split("+")[0]
    cpu = [e for e in _corpus_entries() if "lines" in (e.meta.get("short_repro") or {}) and (
        e.program.device_type() == "cpu" or "'cuda'" not in (e.path / "repro.py").read_text())]
    judged = [(e, _recorded_result(e, release)) for e in cpu]
    judged = [(e, r) for e, r in judged if r is not None]
    if len(judged) < 3:
        pytest.skip(f"fewer than 3 CPU entries have a versions record for torch {release}")

    def recorded(e, result) -> bool:
        """This very script ran on this torch and did so: the short_repro check (it failed as found) or the
        versions run of this release (its result, this script)."""
        src = (e.path / "repro.py").read_text()
        digest = hashlib.sha256(src.encode()).hexdigest()[:12]
        rec = e.meta["short_repro"]
        if result == "affected" and rec.get("reproduces") is True and rec.get("torch") == torch.__version__ \
                and rec.get("script") == digest:
            return True
        versions = e.meta.get("versions") or {}
        for part in (versions, versions.get("cpu") or {}):
            ran = (part.get("releases") or {}).get(release) or {}
            if ran.get("result") == result and ran.get("script") == digest and \
                    str(ran.get("torch")).split("+")[0] == release:
                return True
        return False

    fresh = [(e, r) for e, r in judged if not recorded(e, r)]
    kept = [(e, r) for e, r in judged if recorded(e, r)]
    sample = random.Random(datetime.date.today().toordinal()).sample(kept, min(3, len(kept)))
    print(f"{len(fresh)} entries without a matching record, {len(sample)} sampled of the rest:",
          [(e.key, r) for e, r in fresh + sample])
    with scripts_in_a_zygote():  # failing scripts run there (a passing one again in a fresh process)
        for e, result in fresh + sample:
            src = (e.path / "repro.py").read_text()
            if result == "affected":
                ok, shown, _ = check_short_repro(src, e.verdict, timeout=300)
                assert ok, (e.key, shown)
            else:
                rc, out, err = run_script(src, timeout=300)
                assert rc == 0, (e.key, "recorded as passing on this release", out[-300:], err[-300:])


def test_the_short_repros_inputs_are_the_values_the_judge_saw():
    """The one-line seeded inputs of a short repro equal the harness's make_inputs at every call: values,
    strides, storage offsets, and which inputs share storage."""
    import copy

    import torch

    from fuzz.program.codegen import module_source
    from fuzz.program.short_repro import _inputs_at

    for e in _corpus_entries():
        p = copy.deepcopy(e.program)
        p.settings.device = "cpu"
        harness = {}
        exec(compile(module_source(p), "harness", "exec"), harness)
        for call in range(p.calls):
            ns = {"torch": torch}
            exec("\n".join(_inputs_at(p, call, "cpu", marks=False)), ns)
            got, want = [ns[x.name] for x in p.inputs], harness["make_inputs"](call)
            for x, a, b in zip(p.inputs, got, want):
                assert (a.shape, a.stride(), a.storage_offset(), a.dtype) == \
                    (b.shape, b.stride(), b.storage_offset(), b.dtype), (e.key, call, x.name)
                assert torch.equal(a, b), (e.key, call, x.name)
            shares = [[a.untyped_storage().data_ptr() == c.untyped_storage().data_ptr() for c in got] for a in got]
            assert shares == [[a.untyped_storage().data_ptr() == c.untyped_storage().data_ptr() for c in want]
                              for a in want], (e.key, call)


def test_the_call_loop_binds_only_the_size_symbols_an_input_shape_names():
    """A shrunk program can keep a schedule symbol no dim uses any more (a CUDA campaign's repro read
    `for call, s1 in enumerate([1, 1])` with s1 unused): the loop binds what the inputs name."""
    from fuzz.judge.verdict import Outcome, Stage, Verdict

    p = program([("relu", ["x0"], {})], sizes={"s0": [3, 5], "s1": [1, 1]})
    v = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=1, sizes={"s0": 5, "s1": 1},
                where="output 0 (v0)", recompiles=2)
    src = short_repro_source(p, v)
    assert "for call, s0 in enumerate([3, 5]):" in src and "s1" not in src, src
    p = program([("relu", ["x0"], {})], shape=(4,), sizes={"s1": [1, 1]})
    src = short_repro_source(p, v)
    assert src is None or "s1" not in src, src
