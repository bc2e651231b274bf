"""A finding that depends on a decision Inductor takes by timing (pad_mm's) is
shrunk with the options that take the decision out of the timing, and the
shipped known-issues file names that form."""

from fuzz.findings.corpus import Corpus
from fuzz.findings.known import KnownIssues
from fuzz.findings.shrink import shrink_entry
from fuzz.findings.signature import signature
from fuzz.findings.steadying import steadied
from fuzz.judge.verdict import Outcome, Stage, Verdict
from fuzz.program.ir import TensorInput

from helpers import program
from test_known import SHIPPED

STRIDES = "strides (96, 12, 3, 1) vs eager (48, 6, 3, 1) (shape (33, 8, 2, 3))"


def matmul_program(device="cuda", backend="inductor", options=None):
    a = TensorInput(name="x0", shape=["s0", 8], dtype="float32", marks=["dynamic", "static"])
    b = TensorInput(name="x1", shape=[8, 3], dtype="float32")
    p = program([("relu", ["x0"], {}), ("matmul", ["v0", "x1"], {}), ("sigmoid", ["v1"], {})],
                inputs=[a, b], sizes={"s0": [5, 9, 12]}, backend=backend)
    p.settings.device = device
    p.settings.options = dict(options or {})
    return p


def stride_mismatch():
    return Verdict(outcome=Outcome.STRIDE, stage=Stage.COMPARE, message=STRIDES, where="output 0")


def ok():
    return Verdict(outcome=Outcome.OK)


def pads_only_when_forced(p):
    """A stand-in for a GPU whose pad_mm benchmark never chooses the pad: the
    stride bug shows only with force_shape_pad, and only while a matmul is left."""
    forced = (p.settings.options or {}).get("force_shape_pad") is True
    return stride_mismatch() if forced and any(c.op == "matmul" for c in p.ops) else ok()


def record(tmp_path, p):
    corpus = Corpus(tmp_path / "corpus")
    v = stride_mismatch()
    entry, _ = corpus.record(p, v, signature(v, p), env={"test": True})
    return corpus, entry


def test_a_stride_mismatch_that_no_longer_shows_is_shrunk_with_the_pad_forced(tmp_path):
    corpus, entry = record(tmp_path, matmul_program())
    calls = []
    res = shrink_entry(entry, evaluate=lambda p: calls.append(p) or pads_only_when_forced(p), time_budget=60, reruns=1)
    assert res.reproduced and res.steadied == "pad_mm"
    assert [c.op for c in res.program.ops] == ["matmul"]
    assert res.program.settings.options == {"force_shape_pad": True}  # the shrinker could not drop it
    e = corpus.load(entry)
    assert e.meta["shrink"]["steadied"] == "pad_mm"
    assert "force_shape_pad" in (entry / "repro.py").read_text()
    # the original was tried as found first, and missed
    assert calls[0].settings.options == {} and calls[1].settings.options == {}
    # the shipped rules name the steadied form as pytorch#152520, and not the form as found
    known = KnownIssues.load(SHIPPED)
    rule = known.match(signature(e.verdict, e.program), e.verdict, e.program)
    assert rule is not None and rule.url.endswith("/152520")
    assert known.match(signature(stride_mismatch(), matmul_program()), stride_mismatch(), matmul_program()) is None


def test_a_finding_that_does_not_show_even_forced_stays_unreproduced(tmp_path):
    _, entry = record(tmp_path, matmul_program())
    calls = []
    res = shrink_entry(entry, evaluate=lambda p: calls.append(p) or ok(), time_budget=60, reruns=1, write=False)
    assert not res.reproduced and res.steadied is None
    assert len(calls) == 4  # two tries as found, two forced


def test_the_pad_mm_steadier_is_tried_only_where_pad_mm_decides():
    v = stride_mismatch()
    assert [s.name for s, _ in steadied(matmul_program(), v)] == ["pad_mm"]
    assert steadied(matmul_program(device="cpu"), v) == []
    assert steadied(matmul_program(backend="aot_eager"), v) == []
    assert steadied(matmul_program(options={"shape_padding": False}), v) == []  # pad_mm is off
    assert steadied(matmul_program(options={"force_shape_pad": True}), v) == []  # set already
    assert steadied(matmul_program(), Verdict(outcome=Outcome.DIVERGENCE, message="x")) == []
    no_matrix = matmul_program()
    no_matrix.ops = no_matrix.ops[:1]
    no_matrix.outputs = ["v0"]
    assert steadied(no_matrix, v) == []
    # the copy carries the options; the program itself is left as it was
    p = matmul_program(options={"split_reductions": False})
    [(_, q)] = steadied(p, v)
    assert q.settings.options == {"split_reductions": False, "force_shape_pad": True}
    assert p.settings.options == {"split_reductions": False}
