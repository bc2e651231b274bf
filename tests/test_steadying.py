"""A finding that depends on a decision Inductor takes by timing (pad_mm's) is
shrunk with the options that take the decision out of the timing, and the
shipped known-issues file names that form."""

from fuzz.findings.store.corpus import Corpus
from fuzz.findings.status.known import KnownIssues
from fuzz.findings.shrink.entry import shrink_entry
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
    # as a judge says it: at a call of the schedule (a short repro needs one)
    return Verdict(outcome=Outcome.STRIDE, stage=Stage.COMPARE, message=STRIDES, where="output 0", call=0,
                   sizes={"s0": 5})


def ok():
    return Verdict(outcome=Outcome.OK)


def has_matmul(p):
    return any(c.op == "matmul" for c in p.ops)


def pads_only_when_forced(p):
    """A stand-in for a quiet GPU, whose pad_mm benchmark never chooses the pad:
    the stride bug shows only with force_shape_pad, and only while a matmul is left."""
    forced = (p.settings.options or {}).get("force_shape_pad") is True
    return stride_mismatch() if forced and has_matmul(p) else ok()


def record(tmp_path, p):
    corpus = Corpus(tmp_path / "corpus")
    v = stride_mismatch()
    entry, _ = corpus.record(p, v, signature(v, p), env={"test": True})
    return corpus, entry


def test_a_stride_mismatch_by_pad_mm_is_shrunk_with_the_pad_forced_and_kept(tmp_path):
    corpus, entry = record(tmp_path, matmul_program())
    calls = []
    res = shrink_entry(entry, evaluate=lambda p: calls.append(p) or pads_only_when_forced(p), time_budget=60, reruns=1)
    assert res.reproduced and res.steadied == "pad_mm"
    assert [c.op for c in res.program.ops] == ["matmul"]
    assert res.program.settings.options == {"force_shape_pad": True}
    # first the cause: with pad_mm off it goes, every time (1 + reruns)
    assert [q.settings.options for q in calls[:2]] == [{"shape_padding": False}] * 2
    # the shrinker asked to drop the pinned option and was told no, unjudged
    assert all((q.settings.options or {}).get("force_shape_pad") is True for q in calls[2:])
    e = corpus.load(entry)
    assert e.meta["shrink"]["steadied"] == "pad_mm"
    assert "force_shape_pad" in (entry / "repro.py").read_text()
    # the shipped rules name the steadied form as pytorch#152520, and not the form as found
    known = KnownIssues.load(SHIPPED)
    rule = known.match(signature(e.verdict, e.program), e.verdict, e.program)
    assert rule is not None and rule.url.endswith("/152520")
    assert known.match(signature(stride_mismatch(), matmul_program()), stride_mismatch(), matmul_program()) is None


def test_under_load_the_pad_stays_forced_though_the_finding_shows_without_it(tmp_path):
    """A loaded GPU: pad_mm chooses the pad on every other call. Shrunk as found, the
    result would be a repro that passes on a quiet machine."""
    _, entry = record(tmp_path, matmul_program())
    coin = [False]

    def loaded(p):
        coin[0] = not coin[0]
        opts = p.settings.options or {}
        pads = opts.get("force_shape_pad") is True or (coin[0] and opts.get("shape_padding") is not False)
        return stride_mismatch() if pads and has_matmul(p) else ok()

    res = shrink_entry(entry, evaluate=loaded, time_budget=60, reruns=2, write=False)
    assert res.reproduced and res.steadied == "pad_mm" and not res.flaky
    assert res.program.settings.options == {"force_shape_pad": True}


def test_a_stride_bug_pad_mm_does_not_cause_is_shrunk_as_found(tmp_path):
    _, entry = record(tmp_path, matmul_program(options={"split_reductions": False}))
    res = shrink_entry(entry, evaluate=lambda p: stride_mismatch() if has_matmul(p) else ok(), time_budget=60,
                       reruns=1, write=False)
    assert res.reproduced and res.steadied is None
    assert [c.op for c in res.program.ops] == ["matmul"] and res.program.settings.options == {}


def test_a_finding_that_does_not_show_even_forced_stays_unreproduced(tmp_path):
    _, entry = record(tmp_path, matmul_program())
    calls = []
    res = shrink_entry(entry, evaluate=lambda p: calls.append(p) or ok(), time_budget=60, reruns=1, write=False)
    assert not res.reproduced and res.steadied is None
    # pad_mm off twice, two tries forced, each cheaper backend once (eager, aot_eager, ..._decomp_partition),
    # two as found
    assert len(calls) == 9 and [q.settings.backend for q in calls[4:7]] == ["eager", "aot_eager",
                                                                            "aot_eager_decomp_partition"]


def test_a_flaky_stride_bug_of_another_cause_is_not_blamed_on_pad_mm(tmp_path):
    """It shows on every other call whatever the options: one clean pass with pad_mm
    off proves nothing, and pinned as #152520's form it would be filed as known."""
    _, entry = record(tmp_path, matmul_program())
    coin = [True]  # the first judging (pad_mm off) misses

    def flaky(p):
        coin[0] = not coin[0]
        return stride_mismatch() if coin[0] and has_matmul(p) else ok()

    res = shrink_entry(entry, evaluate=flaky, time_budget=60, reruns=1, write=False)
    assert res.steadied is None and "force_shape_pad" not in (res.program.settings.options or {})


def test_a_judge_that_raises_on_the_off_check_does_not_take_the_shrink_down(tmp_path):
    _, entry = record(tmp_path, matmul_program())

    def broken(p):
        raise RuntimeError("the worker pool returned no verdict")

    res = shrink_entry(entry, evaluate=broken, time_budget=60, reruns=1, write=False)
    assert not res.reproduced and res.steadied is None


def test_the_pad_mm_steadier_is_tried_only_where_pad_mm_decides():
    v = stride_mismatch()
    assert [s.name for s, _, _ in steadied(matmul_program(), v)] == ["pad_mm"]
    assert steadied(matmul_program(device="cpu"), v) == []
    assert steadied(matmul_program(backend="aot_eager"), v) == []
    assert steadied(matmul_program(options={"shape_padding": False}), v) == []  # pad_mm is off
    assert steadied(matmul_program(options={"force_shape_pad": True}), v) == []  # set already
    assert steadied(matmul_program(), Verdict(outcome=Outcome.DIVERGENCE, message="x")) == []
    no_matrix = matmul_program()
    no_matrix.ops = no_matrix.ops[:1]
    no_matrix.outputs = ["v0"]
    assert steadied(no_matrix, v) == []
    # the copies carry the options; the program itself is left as it was
    p = matmul_program(options={"split_reductions": False})
    [(_, forced, off)] = steadied(p, v)
    assert forced.settings.options == {"split_reductions": False, "force_shape_pad": True}
    assert off.settings.options == {"split_reductions": False, "shape_padding": False}
    assert p.settings.options == {"split_reductions": False}
