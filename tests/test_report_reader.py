"""Reports written for the reader (a maintainer): titles that name the trigger and
claim dynamic shapes only where a dim is symbolic, expected and actual per
outcome class, the collapsed ablation; and (a corpus is data) no data field of a
corpus can open a heading, a code fence, an HTML tag or a table cell in
report.md or BUGS.md."""

import json
import re
from pathlib import Path

import pytest

import fuzz.findings.report.issue as report_mod
from fuzz.findings.report.bugs import bug_rows, markdown
from fuzz.findings.store.corpus import Corpus
from fuzz.findings.report.issue import ablation_table, report_title
from fuzz.findings.report.outcome import expected_actual
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.kinds import render_report
from fuzz.program.ir import TensorInput

from helpers import program

ROOT = Path(__file__).resolve().parent.parent
RELU = [("relu", ["x0"], {})]
ENV = {"torch": "2.13.0", "python": "3.12.0", "os": "Linux"}
DYNAMIC_CLAIMS = re.compile(r"dynamic shapes|after a size change|\bat s\d+=|with dynamic=True")
HOSTILE = ("output 0\n# Owned heading\n```\n<script>alert(1)</script> | a | b |\r\n[x](http://evil.example) "
           "@maintainer #123 ~~gone~~")


@pytest.fixture
def no_collect_env(monkeypatch):
    monkeypatch.setattr(report_mod, "collect_env_text", lambda *a, **k: None)


def _verdict(outcome=Outcome.DIVERGENCE, call=0, sizes=None, recompiles=1, **kw):
    kw.setdefault("where", "output 0 (v0)")
    return Verdict(outcome=outcome, stage=Stage.COMPARE, call=call, sizes=sizes or {"s0": 5}, recompiles=recompiles,
                   numbers=kw.pop("numbers", {"max_abs": 1.5, "compiled_vs_fp64": 0.4, "eager_vs_fp64": 0.0}), **kw)


# -- titles --------------------------------------------------------------------

def test_a_static_one_call_program_claims_no_dynamic_shapes():
    p = program(RELU, sizes={"s0": [5]}, backend="inductor")
    assert report_title(p, _verdict()) == "[inductor] torch.relu gives wrong values"
    p.settings.dynamic = True  # one call of dynamic=True: the title claims nothing either (one graph, one size)
    assert not DYNAMIC_CLAIMS.search(report_title(p, _verdict()))
    p = program(RELU, sizes={"s0": [5, 5]}, backend="inductor")  # two calls of one size: nothing recompiled
    assert not DYNAMIC_CLAIMS.search(report_title(p, _verdict(call=1, recompiles=1)))


@pytest.mark.parametrize("marks,sizes,call,recompiles,dynamic,phrase", [
    (["dynamic"], [5], 0, 1, None, "on a mark_dynamic dim gives wrong values at s0=5"),
    (["unbacked"], [1], 0, 1, None, "on an unbacked (mark_unbacked) dim"),  # unbacked: never specialised
    (["maybe_dynamic"], [1], 0, 1, None, None),  # a marked dim of size 1 is specialised: static
    ([], [3, 5], 1, 2, None, "after a size change (automatic dynamic shapes)"),
    ([], [3, 5], 1, 1, None, None),  # the size changed but no second graph: nothing went dynamic
    ([], [3, 5], 1, 1, True, "with dynamic=True"),
])
def test_the_title_claims_dynamic_shapes_only_where_a_dim_is_symbolic(marks, sizes, call, recompiles, dynamic,
                                                                       phrase):
    p = program(RELU, marks=marks, sizes={"s0": sizes}, backend="inductor")
    p.settings.dynamic = dynamic
    title = report_title(p, _verdict(call=call, sizes={"s0": sizes[call]}, recompiles=recompiles))
    if phrase is None:
        assert not DYNAMIC_CLAIMS.search(title), title
    else:
        assert title.startswith("[inductor][dynamic shapes] torch.relu") and phrase in title, title


def test_the_title_names_the_trigger_not_the_neutral_op():
    p = program([("nan_to_num", ["x0"], {}), ("relu", ["v0"], {})], sizes={"s0": [5]}, backend="inductor")
    assert "nan_to_num" not in report_title(p, _verdict())
    p = program([("nan_to_num", ["x0"], {})], sizes={"s0": [5]}, backend="inductor")
    p.inputs[0].layout, p.inputs[0].offset = "offset", 3
    assert report_title(p, _verdict()) == "[inductor] a pointwise op on a storage-offset input gives wrong values"
    base = TensorInput(name="x0", shape=["s0"], dtype="float32")
    view = TensorInput(name="x1", shape=["s0"], dtype="float32", alias={"of": "x0", "view": "same"})
    p = program([("relu_", ["x1"], {})], inputs=[base, view], sizes={"s0": [5]}, backend="inductor")
    assert "Tensor.relu_ on an aliased input mutated in place" in report_title(p, _verdict())
    p = program([("item_arange", ["x0"], {"via": "tolist"})], dtype="int64", sizes={"s0": [5]}, backend="inductor")
    assert "on a length read with .tolist()" in report_title(p, _verdict(Outcome.COMPILED_ERROR, exc_type="E"))
    # a clamp bound read with .item() sizes nothing (a CUDA campaign's title called it a length)
    p = program([("item_clamp", ["x0"], {"via": "item", "bound": "min"})], sizes={"s0": [5]}, backend="inductor")
    assert "on a value read with .item()" in report_title(p, _verdict(Outcome.COMPILED_ERROR, exc_type="E"))


def test_a_narrow_dtype_the_shrinker_kept_is_named():
    """argmin of uint8 is wrong on Inductor CPU (#191499), of float32 it is right: the title says uint8."""
    p = program([("argmin", ["x0"], {})], dtype="uint8", sizes={"s0": [16]}, backend="inductor")
    assert report_title(p, _verdict()) == "[inductor] torch.argmin on a uint8 input gives wrong values"
    p = program([("argmin", ["x0"], {})], sizes={"s0": [16]}, backend="inductor")
    assert report_title(p, _verdict()) == "[inductor] torch.argmin gives wrong values"


def test_aliasing_that_changes_between_calls_is_named():
    """An input that is a view of another at some calls and a copy at others (alias "calls"), written in
    place: the graph compiled for one aliasing must not serve the other (#139789's family)."""
    base = TensorInput(name="x0", shape=[], dtype="float32")
    view = TensorInput(name="x1", shape=[], dtype="float32", alias={"of": "x0", "view": "same",
                                                                     "calls": [True, False]})
    p = program([("mul_scalar_", ["x1"], {"value": 0.0}), ("relu", ["x0"], {})], inputs=[base, view],
                sizes={}, backend="aot_eager", outputs=["v1"])
    assert "on an input whose aliasing changes between calls, mutated in place, gives wrong values" in \
        report_title(p, _verdict(call=1, sizes={})), report_title(p, _verdict(call=1, sizes={}))


def test_a_failed_compiler_command_is_named_by_its_program_and_status_not_its_temp_paths():
    p = program([("logical_and", ["x0", "x0"], {})], sizes={"s0": [4]}, backend="inductor")
    v = _verdict(Outcome.COMPILED_ERROR, exc_type="subprocess.CalledProcessError",
                 message="Command '['/opt/gcc/bin/g++', '/tmp/st/w2/inductor/sc/abc.main.cpp', '-O3', '-o', "
                         "'/tmp/st/w2/abc.main.so']' returned non-zero exit status 1.")
    title = report_title(p, v)
    assert title == "[inductor] torch.logical_and fails to build: g++ exits with status 1", title


def test_a_title_names_the_compile_option_the_bug_needs():
    """Triage flipped triton.cudagraphs off and the bug went away: the title says it needs it; an option
    whose flip changed nothing is not named."""
    p = program(RELU, sizes={"s0": [5]}, backend="inductor")
    p.settings.options = {"triton.cudagraphs": True, "max_autotune": False}
    v = _verdict(Outcome.COMPILED_ERROR, exc_type="AssertionError")
    assert report_title(p, v, {"flags_turning_off": [{"triton.cudagraphs": False}]}).endswith(
        "(triton.cudagraphs=True)")
    assert "cudagraphs" not in report_title(p, v, {"flags_turning_off": []})
    p.settings.backward = True  # a shrunk program keeps backward only where the bug needs it
    assert "torch.relu with inputs that require grad, raises AssertionError" in report_title(p, v)


# ops a report must never name: the harness's own names for torch calls
HARNESS_NAMES = ("mul_scalar_", "add_scalar_", "slice_assign", "item_arange", "item_narrow", "mask_index",
                 "matmul_w", "dropout0", "observe")


def _torch_attr(label: str) -> bool:
    """Whether a dotted label ("torch.add", "Tensor.mul_", "F.pad(reflect)") names a real torch callable."""
    import torch
    import torch.nn.functional as F

    owner, _, attr = label.split("(")[0].partition(".")
    return hasattr({"torch": torch, "Tensor": torch.Tensor, "F": F}.get(owner), attr) if attr else False


def test_every_op_is_named_by_the_torch_api_a_user_writes():
    """A report names torch's API, never a harness op ("Tensor.mul_scalar_" is no method: Tensor.mul_ is; "add"
    is an operator: torch.add); the ops torch has no function for read as what a user writes (x[a:b] = v)."""
    from fuzz.program.opdb import OPS

    phrases = {"slicing x[a:b]", "slice assignment x[a:b] = v"}
    wrong = [(s.name, s.label()) for s in OPS if s.label() not in phrases and not _torch_attr(s.label())]
    assert wrong == []
    labels = {s.name: s.label() for s in OPS}
    assert (labels["mul_scalar_"], labels["add"], labels["div_scalar"], labels["dropout0"], labels["item_narrow"]) == (
        "Tensor.mul_", "torch.add", "torch.div", "F.dropout(p=0)", "Tensor.narrow")
    base = TensorInput(name="x0", shape=["s0"], dtype="float32")
    view = TensorInput(name="x1", shape=["s0"], dtype="float32", alias={"of": "x0", "view": "same"})
    p = program([("mul_scalar_", ["x1"], {"s": 0.0})], inputs=[base, view], sizes={"s0": [5]}, backend="inductor")
    title = report_title(p, _verdict(Outcome.COMPILED_ERROR, exc_type="TypeError"))
    assert title.startswith("[inductor] Tensor.mul_ on an aliased input mutated in place raises TypeError"), title


def test_the_ops_column_names_the_torch_api_for_both_program_kinds():
    from fuzz.kinds import named

    compiled, steps = named("compiled"), named("steps")
    assert [compiled.op_label(o) for o in ("mul_scalar_", "mask_index", "matmul_w", "relu")] == [
        "Tensor.mul_", "Tensor.__getitem__(bool mask)", "torch.matmul", "torch.relu"]
    assert [steps.op_label(o) for o in ("observe", "setitem", "full", "mul_")] == [
        "Tensor.cpu", "slice assignment", "torch.full", "mul_"]
    rows = (ROOT / "corpus" / "BUGS.md").read_text().split("| bug |", 1)[1]
    ops_cells = [line.split(" | ")[3] for line in rows.splitlines()[2:] if line.startswith("| `")]
    assert ops_cells and not [c for c in ops_cells if any(n.replace("_", "\\_") in c for n in HARNESS_NAMES)]


def test_inputs_require_grad_in_a_title_only_where_one_can():
    """A backward case of integer inputs runs forward only (an int16 tensor cannot require grad): its title must
    not say "with inputs that require grad" (a CUDA atomic_add report did)."""
    v = _verdict(Outcome.COMPILED_ERROR, exc_type="ValueError")
    p = program([("cumsum", ["x0"], {"dim": 0})], dtype="int16", sizes={"s0": [5]}, backend="inductor")
    p.settings.backward = True
    assert "require grad" not in report_title(p, v)
    p = program([("cumsum", ["x0"], {"dim": 0})], sizes={"s0": [5]}, backend="inductor")
    p.settings.backward = True
    assert "with inputs that require grad" in report_title(p, v)


def _entry(tmp_path, text, p, shrink=None):
    from types import SimpleNamespace

    from fuzz.findings.signature import Signature

    return SimpleNamespace(path=tmp_path, signature=Signature.of_text(text, minimal=True), program=p,
                           meta={"shrink": {"timed_out": False, "interrupted": False} if shrink is None else shrink})


def test_marks_a_signature_pins_claim_no_dynamic_shapes_without_a_triage(tmp_path):
    """A minimal signature that names marks keeps them in the shrunk program whether or not the bug needs them
    (a softmax + cat + index_put CUDA entry reproduced with no dim marked): without a triage's static row, its
    title claims nothing; with one that says static shapes pass, it does. Marks a shrink had no time to try
    (it timed out) prove nothing either."""
    from fuzz.findings.report.issue import entry_summary

    p = program(RELU, marks=["maybe_dynamic"], sizes={"s0": [5]}, backend="inductor")
    v = _verdict()
    text = "divergence | output | needs: pointwise | marks: dynamic | layout: - | dtype: - | device: cpu"
    summary = entry_summary(_entry(tmp_path, text, p))
    assert summary == {"marks_unproven": True}
    assert not DYNAMIC_CLAIMS.search(report_title(p, v, summary))
    assert "on a maybe_mark_dynamic dim" in report_title(p, v, {**summary, "dynamic_shape_bug": True})
    named = _entry(tmp_path, "compiled-only-error | E | m | f", p)
    assert entry_summary(named) is None  # a message-named bug: the shrinker could drop marks it did not need
    assert "on a maybe_mark_dynamic dim" in report_title(p, v, entry_summary(named))
    late = _entry(tmp_path, "compiled-only-error | E | m | f", p, shrink={"timed_out": True})
    assert not DYNAMIC_CLAIMS.search(report_title(p, v, entry_summary(late)))


def test_options_a_finished_shrink_kept_are_named_in_the_title(tmp_path):
    """The shrinker tries options -> {} and mode -> None: where the signature pins neither and the shrink finished,
    what is left is needed (a nonzero under triton.cudagraphs=True; a unique under mode='max-autotune'); options a
    signature pins, or a shrink that timed out kept, are not named without a triage."""
    from fuzz.findings.report.issue import entry_summary

    p = program(RELU, sizes={"s0": [5]}, backend="inductor")
    p.settings.options = {"triton.cudagraphs": True}
    v = _verdict(Outcome.COMPILED_ERROR, exc_type="AcceleratorError")
    named = "compiled-only-error | AcceleratorError | m | f"
    assert report_title(p, v, entry_summary(_entry(tmp_path, named, p))).endswith("(triton.cudagraphs=True)")
    assert "cudagraphs" not in report_title(p, v, entry_summary(_entry(tmp_path, named, p, {"timed_out": True})))
    pinned = "divergence | output | needs: pointwise | marks: - | mode: - | flags: triton.cudagraphs=True | device: cuda"
    assert "cudagraphs" not in report_title(p, v, entry_summary(_entry(tmp_path, pinned, p)))
    p.settings.options, p.settings.mode = {}, "max-autotune"
    assert report_title(p, v, entry_summary(_entry(tmp_path, named, p))).endswith("(mode='max-autotune')")


def test_a_pad_whose_negative_widths_empty_a_dim_says_so():
    """F.pad(x, (w, w)) with w = size // 3 - 1 = -1 at size 2 crops that dim to 0: the bug is an empty result (a
    CUDA ZeroDivisionError), which the title names; at size 9 the same pad keeps the dim and the title says nothing."""
    w = {"dim": -1, "div": 3, "add": -1}
    v = _verdict(Outcome.COMPILED_ERROR, exc_type="ZeroDivisionError")
    p = program([("pad", ["x0"], {"mode": "constant", "pad": [w, w]})], sizes={"s0": [2]}, backend="inductor")
    assert "F.pad(constant) on an input that negative pad widths crop to size 0 raises" in report_title(p, v)
    p = program([("pad", ["x0"], {"mode": "constant", "pad": [w, w]})], sizes={"s0": [9]}, backend="inductor")
    assert "crop" not in report_title(p, v)


def test_an_input_empty_at_the_failing_call_is_named():
    """group_norm's backward on a (31, 1, 0, 8, 1) input divides by zero: the title says the input is empty (at
    the failing call; the same program at size 4 says nothing), after the layout and dtype facts."""
    v = _verdict(Outcome.COMPILED_ERROR, exc_type="ZeroDivisionError", call=1, sizes={"s0": 0})
    p = program(RELU, sizes={"s0": [4, 0]}, backend="inductor")
    assert "torch.relu on an empty (size-0) input raises" in report_title(p, v)
    assert "empty" not in report_title(p, _verdict(Outcome.COMPILED_ERROR, exc_type="E", call=0, sizes={"s0": 4}))


def _static_one_call(p, v) -> bool:
    """No dim marked, dynamic not True, and no size change up to the failing call."""
    upto = (v.call or 0) + 1
    return (p.settings.dynamic is not True and all(m == "static" for x in p.inputs for m in x.marks)
            and all(len(set(vals[:upto])) == 1 for vals in p.sizes.values()))


def test_no_shipped_report_title_claims_dynamic_shapes_for_a_static_one_call_program():
    entries = [e for e in Corpus(ROOT / "corpus").entries() if e.program.device_type() != "xla"]
    static = 0
    for e in entries:
        first = (e.path / "report.md").read_text().splitlines()[0]
        assert "nan\\_to\\_num" not in first and "nan_to_num" not in first, (e.key, first)
        if _static_one_call(e.program, e.verdict):
            static += 1
            assert not DYNAMIC_CLAIMS.search(first), (e.key, first)
    assert static >= 5  # the bar means something: the corpus holds static programs


# -- expected and actual -------------------------------------------------------

def test_expected_and_actual_are_one_sentence_each_per_outcome_class():
    p = program([("add_scalar_", ["x0"], {"value": 1.0})], sizes={"s0": [5]}, backend="inductor")
    cases = {
        Outcome.INPUT_MUTATION: (_verdict(Outcome.INPUT_MUTATION, where="input x0", numbers={"max_abs": 1.0}),
                                 ["eager writes to it in place", "Tensor.add"], ["up to 1 away"]),
        Outcome.RECOMPILE: (_verdict(Outcome.RECOMPILE, where="graphs",
                                     message="1 new graph(s) at ...; failed guard: L['x0'].size()[0] == 5"),
                            ["reuses the graph"], ["compiles a new graph", "`L['x0'].size()[0] == 5`"]),
        Outcome.STRIDE: (_verdict(Outcome.STRIDE, message="strides (1, 4) vs eager (4, 1) (shape (4, 4))"),
                         ["eager's strides `(4, 1)`"], ["has strides `(1, 4)`"]),
        Outcome.DIVERGENCE: (_verdict(), ["equals eager's"], ["max abs error", "float64", "0.4"]),
        Outcome.COMPILED_ERROR: (_verdict(Outcome.COMPILED_ERROR, exc_type="RuntimeError", message="boom\nmore"),
                                 ["eager runs without error"], ["raises `RuntimeError`", "boom"]),
    }
    for outcome, (v, want_expected, want_actual) in cases.items():
        expected, actual = expected_actual(p, v, dtype="float32")
        for text, wants in ((expected, want_expected), (actual, want_actual)):
            assert text.count(". ") == 0 and "\n" not in text, (outcome, text)  # one sentence
            for w in wants:
                assert w in text, (outcome, w, text)
        if outcome in (Outcome.INPUT_MUTATION, Outcome.RECOMPILE, Outcome.STRIDE):
            assert "float64" not in expected + actual and "the same as eager" not in expected, (outcome, expected)


# -- the ablation --------------------------------------------------------------

def _row(axis, status, changes=None, summary=""):
    return {"axis": axis, "status": status, "changes": changes or {}, "summary": summary, "outcome": "divergence"}


def test_the_ablation_shows_the_key_rows_and_only_the_options_that_change_the_result():
    rows = [_row("baseline", "reproduces"), _row("backend", "passes", {"backend": "eager"}),
            _row("shapes", "reproduces", {"dynamic": False}), _row("device", "reproduces", {"device": "cpu"})]
    rows += [_row("inductor-config", "reproduces", {"options": {f"flag_{i}": True}}) for i in range(15)]
    rows.append(_row("inductor-config", "passes", {"options": {"cpp_wrapper": True}}))
    table = ablation_table({"rows": rows})
    body = [ln for ln in table.splitlines() if ln.startswith("| ") and "variant" not in ln]
    assert len(body) == 5, table
    assert "`torch._inductor.config.cpp_wrapper = True` | passes" in table and "flag_3" not in table
    assert "15 more variant(s)" in table


# -- escaping ------------------------------------------------------------------

def _prose(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks (a fence closes with at least as many backticks)."""
    out, fence = [], None
    for ln in text.splitlines():
        m = re.match(r"^(`{3,})", ln)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and ln.startswith(fence) and not ln.strip("`"):
            fence = None
        elif fence is None:
            out.append(ln)
    assert fence is None, "a code fence never closes"
    return out


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def _assert_inert(text: str, headings: list[str]):
    prose = _prose(text)
    assert [ln for ln in prose if ln.startswith("#")] == headings
    # what a code span holds is literal (markdown.code's fence outruns any backticks in it)
    joined = "\n".join(re.sub(r"(?<![`\\])(`+)(?!`).*?(?<!`)\1(?!`)", "<code>", ln) for ln in prose)
    assert "\r" not in joined
    for bad in (r"<script", r"<img", r"\]\(http://evil", r"@maintainer", r"#123", r"~~gone"):  # unless backslash-escaped
        assert not re.search(r"(?<!\\)" + bad, joined), (bad, joined)
    for ln in prose:
        if ln.startswith("|"):
            header = next(h for h in prose if h.startswith("|") and prose.index(h) <= prose.index(ln))
            assert _unescaped_pipes(ln) == _unescaped_pipes(header), ln


def test_a_hostile_where_and_message_stay_text_in_report_md_and_bugs_md(tmp_path, no_collect_env):
    corpus = Corpus(tmp_path)
    p = program(RELU, marks=["dynamic"], backend="inductor")
    hostile = [_verdict(where=HOSTILE, sizes={"s0": 9}),
               _verdict(Outcome.COMPILED_ERROR, where=HOSTILE, exc_type="RuntimeError", message=HOSTILE[9:],
                        frames=[f"torch/x.py:1:{HOSTILE}"])]
    for v in hostile:
        entry, _ = corpus.record(p, v, signature(v, p), env={**ENV, "torch": "2.13.0\n# env heading"})
        (entry / "ablation.json").write_text(json.dumps({"rows": [
            _row("baseline", "reproduces"), _row("backend", "other", {"backend": "eager"}, HOSTILE[9:]),
            _row("inductor-config", "passes", {"options": {"x": HOSTILE}})], "summary": {}}))
        corpus.set_meta(entry, "versions", {"releases": {"2.13": {"torch": HOSTILE, "result": "error",
                                                                  "shown": HOSTILE}}})
        text = render_report(entry)
        heads = ["### 🐛 Describe the bug", "#### Expected and actual", "#### Ablation", "### Error logs",
                 "#### Affected releases", "#### Searching for duplicates", "### Versions"]
        _assert_inert(text, [text.splitlines()[0]] + heads)
        assert text.splitlines()[0].startswith("# ") and "\n" not in text.splitlines()[0]
    rows = bug_rows(tmp_path)
    for r in rows:
        r.title, r.upstream, r.status = HOSTILE, HOSTILE, "new"  # rows of the table, not the pending paragraph
    md = markdown(rows, tmp_path)
    _assert_inert(md, [md.splitlines()[0]])
    assert sum(ln.startswith("| `") for ln in md.splitlines()) == len(rows)  # one table line per bug, \r or not


def test_a_failed_cpp_build_is_judged_by_the_compilers_diagnostic():
    """Inductor's C++ build failing: the innermost exception is the CalledProcessError of a command line of
    temp paths, the same for every such bug; the verdict takes the compiler's first `error:` line from the
    CppCompileError around it (what a standalone run prints too), and the title names it."""
    import subprocess

    from torch._inductor.exc import CppCompileError

    from fuzz.judge.verdict import error_verdict

    out = ("/tmp/x/ab.main.cpp: In function 'void kernel()':\n/tmp/x/ab.main.cpp:41:54: warning: unused\n"
           "/tmp/x/ab.main.cpp:42:9: error: 'struct at::vec::Vectorized<bool>' has no member named 'cast'\n")
    try:
        try:
            raise subprocess.CalledProcessError(1, ["/usr/bin/g++", "/tmp/x/ab.main.cpp", "-O3"])
        except subprocess.CalledProcessError as e:
            raise CppCompileError(["/usr/bin/g++", "/tmp/x/ab.main.cpp"], out) from e
    except CppCompileError as e:
        v = error_verdict(Outcome.COMPILED_ERROR, e)
    assert v.exc_type.endswith("CppCompileError")
    assert v.message == "error: 'struct at::vec::Vectorized<bool>' has no member named 'cast'"
    p = program([("logical_and", ["x0", "x0"], {})], sizes={"s0": [4]}, backend="inductor")
    title = report_title(p, v)
    assert title.startswith("[inductor] torch.logical_and raises CppCompileError \"'struct at::vec::Vectorized<bool>'")
    assert "/tmp" not in title and "g++" not in title, title
