"""Every program file is checked against one schema, schema.json beside this
module, before any of it is used: a program file comes from someone else, so
each field is data of a known type and range, never text to run.

schema.json is a JSON Schema (draft 2020-12). Its checker here implements the
keywords that file uses (type, enum, const, properties, required,
additionalProperties, propertyNames, items, min/maxItems, maxProperties,
minimum, maximum, pattern, maxLength, anyOf, $ref), so shapefuzz needs no
schema library on a GPU box without network; tests/test_schema.py holds it to
the `jsonschema` package's answers where that is installed. What a schema
cannot say (a symbol an input names is a key of sizes, min <= max of a
mark_range) the loader checks after it (ir.py, step_ir.py, typecheck.py).
"""

from __future__ import annotations

import builtins
import json
import keyword
import math
import re
from functools import lru_cache
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("schema.json")

# Names the generated code (codegen.module_source, repro_source) binds or reads
# itself, builtins included: a program's input, value or size symbol named so
# would shadow them. Checked against the generated code by tests/test_schema.py.
RESERVED_NAMES = frozenset(dir(builtins)) | frozenset({"n", 
    "torch", "F", "sys", "re", "time", "math", "importlib", "make", "make_inputs", "mark_inputs", "program",
    "main", "compiled", "g", "call", "fp64", "t", "dtype", "shape", "scale", "SEED", "DEVICE", "SIZES",
    "DYNAMIC_DIMS", "DYNAMO_CONFIG", "BACKWARD", "MAX_GRAPHS", "SKIP_EXIT", "run_schedule", "compare_outputs",
    "describe", "missing_device", "result", "lines", "failed", "key", "value", "inputs", "out", "expected",
})


@lru_cache(maxsize=1)
def schema() -> dict:
    with open(SCHEMA_PATH) as f:
        return json.load(f)


def bad_name(name: str) -> str | None:
    """Why `name` (an identifier by the schema) cannot be a Python name in generated code, or None."""
    if keyword.iskeyword(name) or name in RESERVED_NAMES or name.startswith("__"):
        return f"{name!r} cannot be a name (a Python keyword, or a name the generated code uses)"
    return None


# JSON values (numbers, strings, lists, objects) one program may hold: the largest programs shapefuzz writes hold
# a few thousand; a file of millions of numbers, each within the schema's limits, would take minutes to check.
MAX_PROGRAM_VALUES = 100_000
# Bytes of a program file, read before it is parsed (the corpus's largest program.json is 15 KB).
MAX_PROGRAM_BYTES = 2_000_000


def violation(doc, definition: str) -> str | None:
    """One line naming the first field of `doc` that the schema's `definition`
    ("compiled_program", "step_program", ...) refuses, and why; None if it fits."""
    root = schema()
    return check(doc, root["$defs"][definition], root, "the program", MAX_PROGRAM_VALUES)


def check(doc, s: dict, root: dict, whole: str, max_values: int | None = None, max_depth: int = 64) -> str | None:
    """One line naming the first field of `doc` that schema `s` (with `root` holding its $defs) refuses, and
    why ("`whole`: ..." when it is the document itself); None if it fits. Checked first: at most max_values
    JSON values (the checker's time grows with them) nested at most max_depth deep."""
    n, depth = count_values(doc, max_values if max_values is not None else 1 << 62, max_depth)
    if depth > max_depth:
        return f"{whole}: nested more than {max_depth} deep (the limit for this kind of file)"
    if max_values is not None and n > max_values:
        return f"{whole}: holds more than {max_values} JSON values (the limit for this kind of file)"
    err = _check(doc, s, root, "")
    if err is None:
        return None
    where, why = err
    return f"{where or whole}: {_text(why)}"[:400]


def count_values(doc, stop: int, max_depth: int = 1 << 30) -> tuple[int, int]:
    """(JSON values in doc, itself included; its nesting depth), counting no further than stop + 1 values
    or max_depth + 1 levels."""
    n, deepest, stack = 0, 0, [(doc, 0)]
    while stack and n <= stop and deepest <= max_depth:
        v, depth = stack.pop()
        n += 1
        deepest = max(deepest, depth)
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
            n += len(v)  # the keys
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return n, deepest


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


_KINDS = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object",
          type(None): "null"}


def _kind(v) -> str:
    return _KINDS.get(type(v)) or type(v).__name__


def _short(v) -> str:
    text = json.dumps(v) if _kind(v) != type(v).__name__ else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _check(v, s: dict, root: dict, at: str):
    """(where, why) for the first violation of schema `s` by value `v`, or None."""
    if "$ref" in s:
        return _check(v, root["$defs"][s["$ref"].rsplit("/", 1)[1]], root, at)
    if "anyOf" in s:
        errs = []
        for sub in s["anyOf"]:  # stops at the first branch that fits
            err = _check(v, sub, root, at)
            if err is None:
                return None
            errs.append(err)
        deepest = max(errs, key=lambda e: len(e[0]))
        if deepest[0] == at and s.get("description"):  # no branch got further than v itself
            return at, lambda: f"must be {s['description']}; got {_kind(v)} {_short(v)}"
        return deepest
    if "const" in s and not _same(v, s["const"]):
        return at, lambda: f"must be {json.dumps(s['const'])}, got {_short(v)}"
    if "enum" in s and not any(_same(v, e) for e in s["enum"]):
        return at, lambda: f"must be one of {', '.join(json.dumps(e) for e in s['enum'])}; got {_short(v)}"
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_TYPES[t](v) for t in types):
            return at, lambda: f"must be {' or '.join(types)}, got {_kind(v)} {_short(v)}"
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isnan(v) and ("minimum" in s or "maximum" in s):
            return at, "must be a number, got NaN"
        if "minimum" in s and v < s["minimum"]:
            return at, f"must be >= {s['minimum']}, got {_short(v)}"
        if "maximum" in s and v > s["maximum"]:
            return at, f"must be <= {s['maximum']}, got {_short(v)}"
    if isinstance(v, str):
        if "maxLength" in s and len(v) > s["maxLength"]:
            return at, f"must be at most {s['maxLength']} characters long"
        if "pattern" in s and not _pattern(s["pattern"]).search(v):
            return at, lambda: f"{_short(v)} is not {s.get('description') or 'of the form ' + s['pattern']}"
    if isinstance(v, list):
        if len(v) < s.get("minItems", 0):
            return at, f"needs at least {s['minItems']} item{'s' * (s['minItems'] > 1)}, got {len(v)}"
        if "maxItems" in s and len(v) > s["maxItems"]:
            what = f" ({s['description']})" if s.get("description") else ""
            return at, f"takes at most {s['maxItems']} items, got {len(v)}{what}"
        if "items" in s:
            for i, x in enumerate(v):
                err = _check(x, s["items"], root, f"{at}[{i}]")
                if err:
                    return err
    if isinstance(v, dict):
        return _check_object(v, s, root, at)
    return None


def _check_object(v: dict, s: dict, root: dict, at: str):
    if "maxProperties" in s and len(v) > s["maxProperties"]:
        return at, f"takes at most {s['maxProperties']} fields, got {len(v)}"
    for key in s.get("required", ()):
        if key not in v:
            return at, f"missing field {key!r}"
    props = s.get("properties", {})
    for key, x in v.items():
        where = f"{at}.{key}" if at and _plain(key) else (key if _plain(key) else f"{at}[{_short(key)}]")
        if "propertyNames" in s:
            err = _check(key, s["propertyNames"], root, where)
            if err:
                return where, f"is not an allowed key ({_text(err[1])})"
        if key in props:
            err = _check(x, props[key], root, where)
        elif s.get("additionalProperties") is False:
            err = (where, f"unknown field (known: {', '.join(props)})")
        elif isinstance(s.get("additionalProperties"), dict):
            err = _check(x, s["additionalProperties"], root, where)
        else:
            err = None
        if err:
            return err
    return None


@lru_cache(maxsize=None)
def _pattern(pattern: str) -> re.Pattern:
    r"""A schema pattern as JSON Schema reads it (ECMA-262), in Python's re: `$` is the end of the text (Python's
    also matches before a final newline, so "s0\n" would pass as a name), and \d, \w, \s are ASCII only."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(r"\Z" if c == "$" and not in_class else c)
        i += 1
    return re.compile("".join(out), re.ASCII)


def _text(why) -> str:
    """A violation's reason: text, or a function making it (only the one reported is made)."""
    return why() if callable(why) else why


def _plain(key: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", key) is not None


def _same(a, b) -> bool:
    """JSON equality: 1 is not true, 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return type(a) in (int, float) and type(b) in (int, float) and a == b or a == b and type(a) is type(b)
