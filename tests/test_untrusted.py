"""A program file and a corpus are untrusted data: no field of one
runs as code, a malformed field is exit 2 with one line (never a traceback,
never a finding), and replay never answers without a judged run.

Each payload below would run `touch SENTINEL` if a field were pasted into
generated code, imported, or evaluated; every test looks for the sentinel
after `check`, `repro` and running the generated repro.py."""

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.cli import main as shapefuzz_main
from fuzz.program.ir import ProgramError
from fuzz.program.loading import load_program

ROOT = Path(__file__).resolve().parent.parent

BASE = {"schema": 1, "sizes": {"s0": [3, 5]},
        "inputs": [{"name": "x0", "shape": ["s0", 4], "marks": ["dynamic", "static"]},
                   {"name": "x1", "shape": [4], "layout": "offset", "offset": 3}],
        "ops": [{"op": "relu", "args": ["x0"], "params": {}, "out": "v0"},
                {"op": "pad", "args": ["v0"], "params": {"pad": [1, 1], "mode": "constant"}, "out": "v1"}],
        "outputs": ["v1"], "settings": {"backend": "eager", "device": "cpu"}}


def payloads(sentinel: Path) -> list:
    """Strings that run `touch sentinel` wherever they are pasted, evaluated or imported."""
    cmd = f"__import__('os').system('touch {sentinel}')"
    return [cmd, f"z = {cmd}; z", f'"""\n{cmd}\n"""', f"'); {cmd}; ('", f"\n{cmd}\n", f"1)\n{cmd}\n(",
            f"os:system", f"x0 if {cmd} else x0", f"{cmd}  # ", "s0\\\n" + cmd]


def run_cli(argv, capsys, cwd):
    """(rc, stdout, stderr) of `shapefuzz ARGV` in this process, in cwd."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        rc = shapefuzz_main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(rc, err, *needles):
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("shapefuzz:"), (rc, err[-2000:])
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]


# -- the payloads of the issue, and the fields they were in ------------------------------

def _named_payloads(sentinel):
    cmd = f"__import__('os').system('touch {sentinel}')"
    out = {}
    d = copy.deepcopy(BASE)
    d["sizes"] = {f"z = {cmd}; z": [3, 5]}
    d["inputs"][0]["shape"][0] = f"z = {cmd}; z"
    out["size name"] = d
    d = copy.deepcopy(BASE)
    d["inputs"][0]["mark_range"] = {"0": [cmd, 64]}
    out["mark_range value"] = d
    d = copy.deepcopy(BASE)
    d["settings"]["backend"] = "os:system"
    out["backend module:attr"] = d
    d = copy.deepcopy(BASE)
    d["inputs"][0]["name"] = cmd
    out["input name"] = d
    d = copy.deepcopy(BASE)
    d["ops"][1]["params"]["mode"] = f"constant', value={cmd}, x='"
    out["op param string"] = d
    d = copy.deepcopy(BASE)
    d["settings"]["dynamo"] = {cmd: True}
    out["dynamo key"] = d
    d = copy.deepcopy(BASE)
    d["settings"]["options"] = {"split_reductions": cmd}
    out["inductor option value"] = d
    d = copy.deepcopy(BASE)
    d["settings"]["device"] = f"cpu'); {cmd}; ('"
    out["device"] = d
    d = copy.deepcopy(BASE)
    d["outputs"] = [f"v1, {cmd}"]
    out["output name"] = d
    d = copy.deepcopy(BASE)
    d["inputs"][1]["offset"] = f"3] + [{cmd}"
    out["offset"] = d
    return out


def test_every_payload_field_is_refused_and_runs_nothing(tmp_path, capsys):
    sentinel = tmp_path / "PWNED"
    for what, d in _named_payloads(sentinel).items():
        case = tmp_path / "case.json"
        case.write_text(json.dumps(d))
        rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
        one_line_error(rc, err)
        rc, out, err = run_cli(["repro", case, "-o", tmp_path / "repro.py"], capsys, tmp_path)
        one_line_error(rc, err)
        assert not (tmp_path / "repro.py").exists(), what
        assert not sentinel.exists(), what


def test_a_case_file_name_cannot_break_out_of_the_repro_docstring(tmp_path, capsys):
    sentinel = tmp_path / "PWNED"
    name = 'c"""\n__import__("os").system("touch PWNED")\n""".json'  # no "/": a file name; runs in tmp_path
    case = tmp_path / name
    case.write_text(json.dumps(BASE))
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    assert rc == 0, err
    rc, out, err = run_cli(["repro", case, "-o", tmp_path / "repro.py"], capsys, tmp_path)
    assert rc == 0, err
    r = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "OK: compiled and eager agree" in r.stdout, r.stderr[-2000:]
    assert not sentinel.exists()


def test_a_custom_backend_is_imported_only_when_the_command_line_allows_it(tmp_path, capsys, monkeypatch):
    from fuzz.judge.backends import ALLOW_ENV

    monkeypatch.setenv(ALLOW_ENV, "")
    d = copy.deepcopy(BASE)
    d["settings"]["backend"] = "fuzz.planted_absent_module:nothing"
    case = tmp_path / "case.json"
    case.write_text(json.dumps(d))
    # not imported: the line says how to allow it, and no import was tried
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    one_line_error(rc, err, "--allow-backend fuzz.planted_absent_module")
    rc, out, err = run_cli(["repro", case], capsys, tmp_path)
    one_line_error(rc, err, "--allow-backend")
    # allowed: now it is imported (and this module does not exist)
    rc, out, err = run_cli(["check", case, "--in-process", "--allow-backend", "fuzz.planted_absent_module"],
                           capsys, tmp_path)
    one_line_error(rc, err, "cannot load")
    # shapefuzz's own planted backends are always allowed
    d["settings"]["backend"] = "fuzz.planted:corrupt_large"
    case.write_text(json.dumps(d))
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    assert rc in (0, 1), err


# -- bad fields: exit 2 and one line --------------------------------------------------

def _with(path, value):
    d = copy.deepcopy(BASE)
    obj = d
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value
    return d


BAD_FIELDS = {
    "offset as a string": (_with(["inputs", 1, "offset"], "3"), "inputs[1].offset"),
    "alias start as a string": (_with(["inputs", 1], {"name": "x1", "shape": ["s0", 2], "alias": {
        "of": "x0", "view": "narrow", "dim": 1, "start": "a", "length": 2}}), "inputs[1].alias.start"),
    "one-element mark_range": (_with(["inputs", 0, "mark_range"], {"0": [2]}), "mark_range"),
    "mark_range a string": (_with(["inputs", 0, "mark_range"], "abc"), "inputs[0].mark_range"),
    "inverted mark_range": (_with(["inputs", 0, "mark_range"], {"0": [10, 2]}), "min 10 is above max 2"),
    "dynamo value not a bool": (_with(["settings", "dynamo"], {"capture_scalar_outputs": "x"}), "settings.dynamo"),
    "dynamo key off the allow list": (_with(["settings", "dynamo"], {"cache_size_limit": 8}), "cache_size_limit"),
    "inductor option off the allow list": (_with(["settings", "options"], {"debug": True}), "settings.options"),
    "a keyword as a size name": (_with(["sizes"], {"def": [3, 5]}), "def"),
    "a size symbol shadowing the harness": (_with(["sizes"], {"torch": [3, 5]}), "torch"),
    "mark_range past the rank": (_with(["inputs", 0, "mark_range"], {"5": [2, 9]}), "past the input's rank"),
    "mark_range that leaves the schedule": (_with(["inputs", 0, "mark_range"], {"0": [4, 9]}), "leave [4, 9]"),
    "negative size": (_with(["sizes", "s0"], [3, -5]), "sizes.s0[1]"),
    "a float seed": (_with(["seed"], 1.5), "seed"),
    "a mode torch.compile lacks": (_with(["settings", "mode"], "fast"), "settings.mode"),
}


@pytest.mark.parametrize("what", sorted(BAD_FIELDS))
def test_a_bad_field_is_exit_2_with_one_line(what, tmp_path, capsys):
    d, needle = BAD_FIELDS[what]
    case = tmp_path / "case.json"
    case.write_text(json.dumps(d))
    rc, out, err = run_cli(["check", case, "--in-process"], capsys, tmp_path)
    one_line_error(rc, err, needle)
    with pytest.raises(ProgramError):
        load_program(d)


def test_repro_to_an_unwritable_path_is_one_line(tmp_path, capsys):
    case = tmp_path / "case.json"
    case.write_text(json.dumps(BASE))
    rc, out, err = run_cli(["repro", case, "-o", "/proc/nope/x.py"], capsys, tmp_path)
    one_line_error(rc, err, "cannot write /proc/nope/x.py")


# -- the loader fuzzes itself ---------------------------------------------------------

def _paths(obj, at=()):
    """Every path into a JSON value (the root too)."""
    yield at
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, at + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, at + (i,))


def _values(sentinel):
    return st.one_of(
        st.sampled_from([None, True, False, 0, -1, 1, 2 ** 31, -2 ** 31, 2 ** 63, 10 ** 30, 1e308, -1e308,
                         math.inf, math.nan, 0.5, "", "x0", "s0", "float32", "dynamic", "offset", [], {}, [1], [-1],
                         {"a": 1}]),
        st.sampled_from(payloads(sentinel)),
        st.sampled_from(payloads(sentinel)).map(lambda s: [s]),
        st.sampled_from(payloads(sentinel)).map(lambda s: {s: s}),
        st.integers(min_value=-2 ** 70, max_value=2 ** 70),
        st.text(max_size=8))


@st.composite
def mutants(draw, base, sentinel):
    """`base` with 1-3 edits: a field dropped, a value replaced (other types,
    huge and negative numbers, payload strings), a key added."""
    d = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(d))
        path = draw(st.sampled_from(paths))
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
        if not path:
            if action == "replace":
                d = draw(_values(sentinel))
            continue
        target = parent[path[-1]]
        if action == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(target, dict):
            target[draw(st.sampled_from(["extra", "name", "op", "__class__"] + payloads(sentinel)[:2]))] = \
                draw(_values(sentinel))
        elif action == "add" and isinstance(target, list):
            target.append(draw(_values(sentinel)))
        else:
            parent[path[-1]] = draw(_values(sentinel))
        if not isinstance(d, (dict, list)):
            break
    return d


STEP_BASE = {"schema": 1, "dtype": "int64", "blocks": [{"repeat": 2, "sizes": {"n0": [2, 3]}, "steps": [
    {"op": "full", "args": [], "params": {"shape": ["n0", 2], "value": 1}, "out": "t0"},
    {"op": "add_", "args": ["t0"], "params": {"other": 2}, "out": ""},
    {"op": "sync", "args": [], "params": {}, "out": ""},
    {"op": "observe", "args": ["t0"], "params": {"how": "cpu"}, "out": ""}]}]}


def test_the_step_base_is_a_valid_program():
    load_program(copy.deepcopy(STEP_BASE))
    load_program(copy.deepcopy(BASE))


@settings(max_examples=300, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_program_files_never_run_code_or_give_a_finding(tmp_path_factory, capsys, data):
    tmp = tmp_path_factory.mktemp("mutant")
    sentinel = tmp / "PWNED"
    base = data.draw(st.sampled_from([BASE, STEP_BASE]), label="base")
    d = data.draw(mutants(base, sentinel), label="mutant")
    case = tmp / "case.json"
    case.write_text(json.dumps(d))
    before = sorted(p.name for p in tmp.iterdir())
    try:
        loaded = load_program(copy.deepcopy(d))
    except ProgramError:
        loaded = None
    if loaded is not None and base is STEP_BASE:
        # a valid step program needs torch_xla to judge: here, loading and its repro are what is checked
        from fuzz.program.loading import repro_source

        compile(repro_source(loaded, "mutant"), "repro.py", "exec")
        assert not sentinel.exists()
        return
    rc, out, err = run_cli(["check", case, "--in-process", "--json"], capsys, tmp)
    assert "Traceback" not in err, err[-3000:]
    if loaded is None:
        one_line_error(rc, err)
    else:
        # the eager backend agrees with eager: a finding here would come from a malformed field
        assert rc in (0, 2), (rc, out[-2000:], err[-2000:])
        if rc == 0:
            assert json.loads(out)["outcome"] in ("ok", "rejected"), out
        else:
            one_line_error(rc, err)
    assert not sentinel.exists(), d
    assert sorted(p.name for p in tmp.iterdir()) == before  # nothing written beside the case
