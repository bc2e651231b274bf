"""fuzz/program/schema.json and its checker: the schema agrees with the code's
tables, the checker agrees with the `jsonschema` package, every corpus
program fits it, and the names it reserves are the names generated code uses."""

import ast
import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.program import dtypes as D
from fuzz.program.ir import MARKS, OpCall, Program, RunSettings, TensorInput
from fuzz.program.layouts import LAYOUTS, VIEWS
from fuzz.program.schema import RESERVED_NAMES, schema, violation

from test_untrusted import BASE, STEP_BASE, mutants

ROOT = Path(__file__).resolve().parent.parent


def _enum(*path):
    node = schema()["$defs"]
    for k in path:
        node = node[k]
    return node["enum"]


def test_the_schema_names_what_the_code_knows():
    from fuzz.findings.steadying import OPTIONS as STEADYING
    from fuzz.findings.triage import FLAGS
    from fuzz.judge.backends import BACKENDS
    from fuzz.program import step_ir
    from strategies.settings import DYNAMO, MODES_CUDA, OPTIONS_CPU, OPTIONS_CUDA

    assert _enum("input", "properties", "dtype") == list(D.ALL)
    assert _enum("input", "properties", "layout") == list(LAYOUTS)
    assert _enum("input", "properties", "marks", "items") == list(MARKS)
    assert _enum("alias", "properties", "view") == list(VIEWS)
    assert _enum("step_program", "properties", "dtype") == list(step_ir.DTYPES)
    assert set(_enum("settings", "properties", "dynamo", "propertyNames")) == set(DYNAMO)
    # every Inductor flag the strategies draw, triage toggles or a shrink steadies with may be in a program
    assert set(_enum("settings", "properties", "options", "propertyNames")) == \
        set(OPTIONS_CPU) | set(OPTIONS_CUDA) | set(FLAGS) | set(STEADYING)
    assert set(MODES_CUDA) <= set(_enum("settings", "properties", "mode"))
    builtin = schema()["$defs"]["settings"]["properties"]["backend"]["anyOf"][0]["enum"]
    assert set(builtin) == {b.name for b in BACKENDS.values() if b.kind == "compiled"}
    step_settings = schema()["$defs"]["xla_settings"]["properties"]
    assert set(step_settings) == set(step_ir.XlaSettings.__dataclass_fields__)
    # one field of the schema per field of the dataclasses a program is loaded into
    for definition, cls in (("input", TensorInput), ("op", OpCall), ("settings", RunSettings),
                            ("compiled_program", Program), ("step", step_ir.Step), ("block", step_ir.Block),
                            ("step_program", step_ir.StepProgram)):
        assert set(schema()["$defs"][definition]["properties"]) == set(cls.__dataclass_fields__), definition


def test_every_corpus_program_fits_the_schema():
    programs = sorted((ROOT / "corpus").glob("*/program.json"))
    assert programs
    for path in programs:
        d = json.loads(path.read_text())
        assert violation(d, "step_program" if "blocks" in d else "compiled_program") is None, path


@settings(max_examples=150, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_checker_agrees_with_jsonschema(data, tmp_path_factory):
    jsonschema = pytest.importorskip("jsonschema")
    base = data.draw(st.sampled_from([BASE, STEP_BASE]))
    d = data.draw(mutants(base, tmp_path_factory.getbasetemp() / "PWNED"))
    if "NaN" in json.dumps(d) or "Infinity" in json.dumps(d):
        return  # not JSON proper: jsonschema and the checker read NaN apart (the loader refuses both anyway)
    ours = violation(d, "step_program") is None or violation(d, "compiled_program") is None
    theirs = jsonschema.Draft202012Validator(schema()).is_valid(d)
    assert ours == theirs, (d, violation(d, "compiled_program"), violation(d, "step_program"))


def _loaded_names(src: str, functions=("make_inputs", "program")) -> set:
    """Names read inside the generated module's make_inputs and program bodies."""
    names = set()
    for node in ast.parse(src).body:
        if isinstance(node, ast.FunctionDef) and node.name in functions:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return names


@settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_reserved_names_cover_what_generated_code_reads(data):
    """A program's own name (input, value, size symbol) could shadow any other
    name that make_inputs or program() reads: each of those is reserved."""
    from fuzz.program.codegen import module_source
    from strategies import programs

    p = data.draw(programs(max_ops=6))
    own = set(p.sizes) | {x.name for x in p.inputs} | {c.out for c in p.ops}
    foreign = _loaded_names(module_source(p)) - own
    assert foreign <= RESERVED_NAMES, foreign - RESERVED_NAMES


def test_a_reserved_name_is_refused():
    from fuzz.program.ir import ProgramError
    from fuzz.program.loading import load_program

    for name in ("torch", "make", "SIZES", "class", "__builtins__"):
        d = copy.deepcopy(BASE)
        d["inputs"][0]["name"] = name
        d["ops"][0]["args"] = [name]
        with pytest.raises(ProgramError, match="cannot be a name|is not a Python identifier|identifier"):
            load_program(d)


def test_every_drawn_program_fits_the_schema():
    """A campaign's programs go through the loader in its workers: one the schema refused would be judged
    INVALID, not run (the CI run that found `interpolate(mode="nearest-exact")` did so)."""
    from helpers import draw_programs

    from fuzz.program.typecheck import op_params

    for kw in (dict(backend="eager", seed=7), dict(backend="inductor", device="cuda", seed=11)):
        for p in draw_programs(300, **kw):
            assert violation(json.loads(p.to_json()), "compiled_program") is None, p.to_json()
            for c in p.ops:  # every param the strategies draw is one op_params.json lists for its op
                assert set(c.params) <= set(op_params()[c.op]), (c.op, c.params)
