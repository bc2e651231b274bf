"""One root cause, one entry, across variants (what a filer wants): dtype names in a
message are parameters, stride findings are keyed by how the strides differ,
data-dependent findings by the op, and the entry lists what it was seen with."""

from fuzz.findings.store.corpus import Corpus
from fuzz.findings.dedupe import settle
from fuzz.findings.signature import minimal_signature, signature, stride_class
from fuzz.judge.runner import run_case
from fuzz.judge.verdict import Outcome, Stage, Verdict

from helpers import program

REFUSES = "tests.planted_extra:refuses_narrow_ints"
ADD = [("add", ["x0", "x1"], {}), ("relu", ["v0"], {})]


def _two_inputs(dtype):
    from fuzz.program.ir import TensorInput

    inputs = [TensorInput(name=n, shape=["s0"], dtype=dtype) for n in ("x0", "x1")]
    return program([("add", ["x0", "x1"], {}), ("abs", ["v0"], {})], inputs=inputs, backend=REFUSES)


def test_the_dtype_variants_of_a_planted_error_are_one_entry(tmp_path):
    corpus = Corpus(tmp_path)
    entries = set()
    for dtype in ("int8", "int16", "uint8"):
        p = _two_inputs(dtype)
        v = run_case(p)
        assert v.outcome is Outcome.COMPILED_ERROR and dtype in v.message, v.summary()
        path, _ = corpus.record(p, v, signature(v, p))
        entries.add(path.name)
    assert len(entries) == 1  # the provisional key masks the dtype already: one entry, three hits
    (entry,) = corpus.entries()
    assert entry.hits == 3
    out = settle(corpus, entry.path, time_budget=60, timeout=60)
    (entry,) = corpus.entries()
    assert entry.minimal and entry.key == out.key
    assert "does not support <dtype>" in entry.signature.text


def test_the_entry_lists_the_variants_it_was_seen_with(tmp_path):
    corpus = Corpus(tmp_path)
    # two programs of one bug under different provisional keys (other op families): merged by settle
    for ops in ([("relu", ["x0"], {})], [("add", ["x0", "x0"], {}), ("neg", ["v0"], {})]):  # other families
        p = program(ops, marks=["dynamic"], backend="fuzz.planted:corrupt_large", dtype="float32")
        v = run_case(p)
        assert v.is_finding
        corpus.record(p, v, signature(v, p))
    for e in list(corpus.entries()):
        settle(corpus, e.path, time_budget=60, timeout=60)
    (entry,) = corpus.entries()
    seen = entry.meta["seen_with"]
    assert seen["devices"] == ["cpu"] and seen["dtypes"] == ["float32"] and seen["programs"] >= 2
    assert {"relu", "add", "neg"} <= set(seen["ops"])


def _stride_verdict(message):
    return Verdict(outcome=Outcome.STRIDE, stage=Stage.COMPARE, where="output 0", message=message)


def test_stride_findings_are_keyed_by_how_the_strides_differ():
    assert stride_class("strides (4, 1) vs eager (3, 1)") == "padded"
    assert stride_class("strides (24, 8, 1) vs eager (12, 4, 1)") == "padded"
    assert stride_class("strides (2, 1) vs eager (1, 2)") == "dim order"
    assert stride_class("strides (4, 1) vs eager (8, 1)") == "denser"
    assert stride_class("strides (1, 9) vs eager (9, 1) (shape (1, 9))") == "padded"  # a size-1 dim: any stride
    mm = program([("mm", ["x0", "x0"], {})], shape=("s0", "s0"), backend="inductor")
    bmm = program([("relu", ["x0"], {}), ("mm", ["v0", "v0"], {})], shape=("s0", "s0"), backend="inductor")
    keys = {minimal_signature(_stride_verdict(m), p).key
            for m, p in (("strides (4, 1) vs eager (3, 1)", mm), ("strides (24, 1) vs eager (12, 1)", bmm))}
    assert len(keys) == 2  # the op families differ (pointwise too)
    assert minimal_signature(_stride_verdict("strides (4, 1) vs eager (3, 1)"), mm).key == \
        minimal_signature(_stride_verdict("strides (40, 1) vs eager (33, 1)"), mm).key
    assert minimal_signature(_stride_verdict("strides (4, 1) vs eager (3, 1)"), mm).key != \
        minimal_signature(_stride_verdict("strides (1, 3) vs eager (3, 1)"), mm).key


def test_a_data_dependent_finding_is_keyed_by_the_op_not_the_program_around_it():
    v = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, where="output 0")
    a = program([("nonzero", ["x0"], {})], marks=["dynamic"])
    b = program([("nonzero", ["x0"], {})], dtype="float16")
    c = program([("unique", ["x0"], {})], marks=["dynamic"])
    assert minimal_signature(v, a).key == minimal_signature(v, b).key
    assert minimal_signature(v, a).key != minimal_signature(v, c).key
    assert "data: nonzero" in minimal_signature(v, a).text


def _entries(tmp_path, cases):
    """Corpus entries of (program, verdict) pairs, keyed by their minimal signatures."""
    corpus = Corpus(tmp_path)
    for p, v in cases:
        corpus.record(p, v, minimal_signature(v, p))
    return list(corpus.entries())


def _with_layout(p, layout):
    p.inputs[0].layout = layout
    if layout == "transposed":
        p.inputs[0].layout_dim = 0
    return p


def test_a_stride_finding_on_any_reordered_layout_is_one_cause_and_a_value_finding_is_not(tmp_path):
    """As index_copy_ losing the dim order of a transposed and of a channels_last input (b5c94b9b057a of
    a fresh campaign, 97e0245651af of corpus/): one row. A divergence keeps the layouts apart."""
    from fuzz.findings.status.clusters import clusters

    def make(layout, outcome):  # as the two entries were: a 2-D transposed input on CPU, a 4-D channels_last on CUDA
        dims = ("s0", "s1") if layout == "transposed" else ("s0", "s1", "s2", "s3")
        p = _with_layout(program([("sin", ["x0"], {})], shape=dims, sizes={k: [2] for k in dims},
                                 backend="inductor"), layout)
        p.settings.device = "cpu" if layout == "transposed" else "cuda"
        message = "strides (2, 1) vs eager (1, 2)" if len(dims) == 2 else "strides (8, 4, 2, 1) vs eager (8, 1, 4, 2)"
        v = _stride_verdict(message) if outcome == "stride" else Verdict(
            outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, call=0, where="output 0", message="values differ")
        return p, v

    for outcome, expect in (("stride", 1), ("divergence", 2)):
        d = tmp_path / outcome
        entries = _entries(d, [make("transposed", outcome), make("channels_last", outcome)])
        assert len(entries) == 2 and len(clusters(entries)) == expect, outcome


def test_stride_findings_on_unbacked_dims_are_one_tracked_row_whatever_the_op(tmp_path):
    from fuzz.findings.status.clusters import clusters

    cases = []
    for op in (("sin", ["x0"], {}), ("cumsum", ["x0"], {"dim": 0})):
        p = program([op], shape=("s0", "s1"), sizes={"s0": [2], "s1": [2]}, marks=["unbacked", "static"],
                    backend="inductor")
        cases.append((p, _stride_verdict("strides (2, 1) vs eager (1, 2)")))
    entries = _entries(tmp_path, cases)
    assert len(entries) == 2 and len(clusters(entries)) == 1


def test_one_error_naming_other_dtypes_is_one_row_and_another_error_is_not(tmp_path):
    """Tensor.view(dtype) raising "self.stride(-1) must be 1 to view Long as Short" and "... Int as Char"
    came back under three keys (the message names the dtypes): one row. Another message stays apart."""
    from fuzz.findings.status.clusters import clusters

    def case(message):
        p = program([("relu", ["x0"], {})], backend="inductor")
        v = Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE, call=0, exc_type="RuntimeError",
                    message=message)
        return p, v

    view = "self.stride(-1) must be 1 to view {} as {} (different element sizes), but got 2"
    entries = _entries(tmp_path, [case(view.format("Long", "Short")), case(view.format("Int", "Char")),
                                  case("expected size 2==2, stride 8==1 at dim=0")])
    assert len(entries) == 3
    assert sorted(len(c.entries) for c in clusters(entries)) == [1, 2]
