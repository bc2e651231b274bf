"""Known-issue rules: the shipped file loads and knows the seed bug; bad files fail in one clear line."""

import json
from pathlib import Path

import pytest

from fuzz.findings.status.known import KnownIssues, KnownIssuesError
from fuzz.findings.signature import signature
from fuzz.judge.verdict import Outcome, Stage, Verdict

SHIPPED = Path(__file__).resolve().parent.parent / "corpus" / "known_issues.json"
SP = "/usr/lib/python3.12/site-packages"
SEED = ("setStorage: sizes [2304], strides [1], storage offset 0, and itemsize 4 requiring a storage size "
        "of 9216 are out of bounds for storage of size 8704")
AUTOTUNE = [f"{SP}/torch/_inductor/runtime/triton_heuristics.py:1023:benchmark_all_configs",
            f"{SP}/torch/_inductor/utils.py:3855:clone_preserve_strides"]


def err(message, exc_type="RuntimeError", frames=AUTOTUNE):
    return Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE, exc_type=exc_type, message=message,
                   frames=list(frames))


def write(tmp_path, data) -> Path:
    p = tmp_path / "known_issues.json"
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def test_shipped_file_knows_the_seed_bug():
    known = KnownIssues.load(SHIPPED)
    v = err(SEED)
    rule = known.match(signature(v), v)
    assert rule is not None and rule.url == "https://github.com/pytorch/pytorch/issues/169760"
    assert rule.status == "open" and "clone_preserve_strides" in rule.note
    other_sizes = err("RuntimeError: setStorage: sizes [64, 3], strides [3, 1], storage offset 0, and itemsize 2 "
                      "requiring a storage size of 512 are out of bounds for storage of size 384")
    assert known.match(signature(other_sizes), other_sizes) is rule


def test_shipped_file_does_not_swallow_other_bugs():
    known = KnownIssues.load(SHIPPED)
    for v in [err("CUDA error: an illegal memory access was encountered"),
              err(SEED, exc_type="ValueError"),
              # same message raised from user code: another bug (https://github.com/meta-pytorch/opacus/issues/442)
              err(SEED, frames=["/site/opacus/utils/tensor_utils.py:143:unfold2d"]),
              err(SEED, frames=[])]:
        assert known.match(signature(v), v) is None, v.message


def test_match_by_signature_key(tmp_path):
    v = err("name 'buf3' is not defined", "NameError")
    key = signature(v).key
    known = KnownIssues.load(write(tmp_path, [{"signature": key, "url": "https://example.org/1", "note": "n"}]))
    same_bug = err("name 'buf12' is not defined", "NameError")
    assert known.match(signature(same_bug), same_bug).url == "https://example.org/1"
    assert known.match(None, same_bug) is None
    other = err("name 'u0' is not defined", "NameError")
    assert known.match(signature(other), other) is None


def test_all_given_fields_must_match_and_first_rule_wins(tmp_path):
    known = KnownIssues.load(write(tmp_path, [
        {"message": "boom", "exc_type": "GuardOnDataDependentSymNode", "url": "", "status": "fixed"},
        {"message": "boom", "url": "https://example.org/2"},
    ]))
    qualified = err("a boom here", "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode")
    assert known.match(None, qualified).index == 0 and known.match(None, qualified).status == "fixed"
    assert known.match(None, err("boom", "SomeOtherGuardOnDataDependentSymNode")).index == 1
    assert known.match(None, err("nothing", "GuardOnDataDependentSymNode")) is None
    assert known.match(None, None) is None
    assert KnownIssues().match(None, qualified) is None


@pytest.mark.parametrize("data,complaint", [
    ("[{", "not valid JSON"),
    ({"rules": []}, "must be a JSON list of rules"),
    ([{"message": "ok"}, "text"], "rule 1: must be an object"),
    ([{"url": "https://x"}], "rule 0: needs a 'signature' key, a 'message' regex"),
    ([{"message": "ok"}, {"message": "set(Storage"}], "rule 1: 'message' is not a valid regex"),
    ([{"message": "ok", "frame": "[x"}], "rule 0: 'frame' is not a valid regex"),
    ([{"signature": "XYZ"}], "rule 0: 'signature' must be a 12-hex-digit key"),
    ([{"message": "ok", "status": "maybe"}], "rule 0: 'status' must be one of"),
    ([{"message": "ok", "url": "github.com/x"}], "rule 0: 'url' must be an http(s) URL"),
    ([{"mesage": "typo"}], "rule 0: unknown fields ['mesage']"),
    ([{"message": "ok", "note": 3}], "rule 0: 'note' must be a string"),
])
def test_bad_file_fails_in_one_line_naming_file_and_rule(tmp_path, data, complaint):
    p = write(tmp_path, data)
    with pytest.raises(KnownIssuesError) as e:
        KnownIssues.load(p)
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"{p}: ") and complaint in text


def test_missing_file(tmp_path):
    with pytest.raises(KnownIssuesError, match="cannot read"):
        KnownIssues.load(tmp_path / "nope.json")


def test_a_rule_can_name_ops_an_outcome_a_setting_and_a_device(tmp_path):
    from helpers import program

    p = program([("relu", ["x0"], {}), ("dropout0", ["v0"], {})], backend="aot_eager")
    v = Verdict(outcome=Outcome.DIVERGENCE, stage=Stage.COMPARE, where="output 0")
    rules = [{"ops": ["dropout0"], "outcome": "divergence", "setting": "backend=aot_eager", "device": "cpu",
              "url": "https://example.org/dropout"},
             {"ops": ["nonzero"], "url": "https://example.org/nonzero"}]
    known = KnownIssues.load(write(tmp_path, rules))
    assert known.match(signature(v, p), v, p).url == "https://example.org/dropout"
    assert known.match(signature(v, p), v) is None  # a program rule needs the program
    p.settings.backend = "inductor"
    assert known.match(signature(v, p), v, p) is None  # the setting differs
    p.settings.backend = "aot_eager"
    other = Verdict(outcome=Outcome.COMPILED_ERROR, stage=Stage.EXECUTE, exc_type="RuntimeError", message="x")
    assert known.match(signature(other, p), other, p) is None  # the outcome differs
    for bad, why in (({"ops": "relu"}, "'ops' must be"), ({"outcome": "wrong"}, "not an outcome"),
                     ({"ops": ["relu"], "setting": "mode"}, "NAME=VALUE"), ({"url": "https://x.org"}, "needs")):
        with pytest.raises(KnownIssuesError, match=why):
            KnownIssues.load(write(tmp_path, [bad]))


@pytest.mark.campaign
def test_a_program_rule_keeps_a_known_cause_out_of_the_corpus(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent

    def campaign(name, rules):
        corpus = tmp_path / f"{name}-corpus"
        corpus.mkdir()
        write(corpus, rules)
        r = subprocess.run([sys.executable, "-m", "fuzz", "run", "--backend", "tests.planted_extra:corrupt_always",
                            "--ops", "relu", "abs", "--max-cases", "12", "--seed", "2", "--workers", "0", "--no-shrink",
                            "--no-triage", "--state", str(tmp_path / name), "--corpus", str(corpus), "--json"],
                           capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(root)), timeout=600)
        entries = [d for d in corpus.iterdir() if d.is_dir() and not d.name.startswith(".")]
        return r, entries

    r, entries = campaign("open", [])
    assert r.returncode == 1 and entries, r.stderr[-2000:]  # the planted bug is found and filed
    rule = {"ops": ["relu"], "outcome": "divergence", "url": "https://example.org/relu-bug"}
    r, entries = campaign("known", [rule, {**rule, "ops": ["abs"], "url": "https://example.org/abs-bug"}])
    assert r.returncode == 0 and entries == [], r.stderr[-2000:]
    stats = json.loads(r.stdout)  # the summary alone (progress on stderr)
    by_rule = stats["known_by_rule"]
    assert set(by_rule) <= {"https://example.org/relu-bug", "https://example.org/abs-bug"} and sum(
        by_rule.values()) == sum(stats["findings_known"].values()) > 0
    assert not stats["findings_new"]
