"""Program -> Python source.

`module_source` is the program as plain torch code (inputs, markings, the
function); the in-process interpreter executes exactly this text, and
`repro_source` adds the comparison rule and the judging loop (fuzz/judge/
compare.py and loop.py, copied verbatim, as the runner uses them) and a main()
that compiles, runs the loop over the size schedule and exits 1 on
disagreement (77, with one line, when the machine lacks its device).
"""

from __future__ import annotations

import inspect
import json

from fuzz.judge import compare as _compare
from fuzz.judge import loop as _loop
from fuzz.judge.backends import ModeOptions, backend, compile_kwargs
from fuzz.judge.by_design import alias_exempt, edges_program, index_table, rounding_edges, stride_exempt
from fuzz.program.dtypes import FLOATING
from fuzz.program.ir import Program
from fuzz.program.layouts import alias_lines, input_expr
from fuzz.program.opdb import OPS
from fuzz.program.quoting import doc_text
from fuzz.program.typecheck import typecheck



def _dims(shape) -> str:
    items = [str(d) for d in shape]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def input_lines(p: Program) -> list[str]:
    lines = []
    for x in p.inputs:
        if x.alias is not None:
            lines += alias_lines(x)
            continue
        args = f"torch.{x.dtype}, {x.scale!r}, g, fp64"
        lines.append(f"    {x.name} = {input_expr(x, list(x.shape), args)}")
        if p.settings.backward and x.dtype in FLOATING:  # a leaf with its layout: gradients flow to it
            lines.append(f"    {x.name} = {x.name}.detach().requires_grad_()")
    return lines


def mark_lines(p: Program) -> list[str]:
    fn = {"dynamic": "torch._dynamo.mark_dynamic", "maybe_dynamic": "torch._dynamo.maybe_mark_dynamic",
          "unbacked": "torch._dynamo.decorators.mark_unbacked"}
    lines = []
    for x in p.inputs:
        for d, m in enumerate(x.marks):
            if m == "static":
                continue
            dim = d - len(x.marks) if x.mark_negative else d
            bounds = x.mark_range.get(str(d)) if m == "dynamic" else None
            extra = f", min={bounds[0]!r}, max={bounds[1]!r}" if bounds else ""
            lines.append(f"    {fn[m]}({x.name}, {dim!r}{extra})")
    return lines


def program_lines(p: Program, name: str = "program", given: dict | None = None) -> list[str]:
    """The program as a function `name`; `given`: {value: expression} for values taken from an argument
    `edges` in place of the ops that compute them."""
    env = typecheck(p)
    lines = [f"def {name}({', '.join([x.name for x in p.inputs] + (['edges'] if given else []))}):"]
    for call in p.ops:
        if given and call.out in given:
            lines.append(f"    {call.out} = {given[call.out]}")
            continue
        spec = OPS[call.op]
        r = spec.render(call.args, call.params, [env[a] for a in call.args])
        if isinstance(r, tuple):
            stmts, result = r
            lines += [f"    {s}" for s in stmts]
            r = result
        lines.append(f"    {call.out} = {r}")
    outs = ", ".join(p.outputs)
    lines.append(f"    return ({outs}{',' if len(p.outputs) == 1 else ''})")
    return lines


def reuse_dims(p: Program) -> list:
    """(input index, dim) of the dims marked mark_dynamic / mark_unbacked: the loop
    checks that calls agreeing on every other size reuse one graph. Empty (not
    checked) with dynamic=False, and when a data-dependent op is in the program:
    a value read from the data may specialise a graph resumed after a break."""
    if p.settings.dynamic is False or any(OPS[c.op].family == "data" for c in p.ops if c.op in OPS):
        return []
    return [(i, d) for i, x in enumerate(p.inputs) for d, m in enumerate(x.marks) if m in ("dynamic", "unbacked")]


def module_source(p: Program) -> str:
    syms = list(p.sizes)
    schedule = [p.sizes_at(i) for i in range(p.calls)]
    marks = mark_lines(p)
    names = ", ".join(x.name for x in p.inputs)
    out = [
        "import torch",
        "import torch.nn.functional as F",
        "",
        f"SEED = {p.seed}",
        f"DEVICE = {p.settings.device!r}",
        "# The size schedule: one compiled callable is called once per entry.",
        f"SIZES = {json.dumps(schedule)}",
        "# (input, dim) marked dynamic: calls that keep every other size, these >= 2, reuse one graph.",
        f"DYNAMIC_DIMS = {reuse_dims(p)!r}",
        f"DYNAMO_CONFIG = {dict(p.settings.dynamo)!r}",
        "# Judge the gradients of a loss of the outputs with respect to the inputs too.",
        f"BACKWARD = {bool(p.settings.backward)!r}",
        "",
        "",
        "def make(shape, dtype, scale, g, fp64):",
        "    if dtype.is_floating_point:",
        "        t = (torch.randn(shape, generator=g) * scale).to(dtype)",
        "        t = t.double() if fp64 else t",
        "    elif dtype == torch.bool:",
        "        t = torch.randint(0, 2, shape, generator=g).bool()",
        "    else:",
        "        t = torch.randint(-8, 9, shape, generator=g).to(dtype)",
        "    return t.to(DEVICE)",
        "",
        "",
        "def make_inputs(call, fp64=False):",
        "    \"\"\"The inputs of one call, the same every time; fp64=True gives the float64 reference's.\"\"\"",
    ]
    if syms:
        out.append(f"    {', '.join(syms)} = " + ", ".join(f"SIZES[call][{s!r}]" for s in syms))
    out += ["    g = torch.Generator().manual_seed(SEED * 1000 + call)"]
    out += input_lines(p)
    out += [f"    return [{names}]", "", "", f"def mark_inputs({names}):"]
    out += marks or ["    pass"]
    out += ["", ""] + program_lines(p)
    return "\n".join(out) + "\n"


def compile_call(p: Program, fn: str = "program") -> tuple[list[str], str]:
    """(import lines, the torch.compile(...) expression of function `fn`) for p's settings."""
    s = p.settings
    imports, backend_expr = backend(s.backend).repro_backend()
    kw = [f"backend={backend_expr}"] + [f"{k}={v.source() if isinstance(v, ModeOptions) else repr(v)}"
                                   for k, v in compile_kwargs(s).items()]
    return imports, f"torch.compile({fn}, {', '.join(kw)})"


def rounding_lines(p: Program) -> list[str]:
    """What fuzz/judge/by_design.py's rounding_edges says of p, as definitions: EDGES and EDGE_OUTPUTS, the
    function that computes the edges (`edge_values`), and the program taking them as given (`replayed`).
    Empty when p has no edge."""
    edges, outputs = rounding_edges(p)
    if not edges:
        return []
    return ["", "# Computed floats a discontinuous op reads (a comparison, a rounding, a data-dependent size), and",
            "# the outputs computed from them: outputs that differ only through them, where compiled is no",
            "# further from a float64 run than eager, differ by rounding.",
            f"EDGES = {edges!r}", f"EDGE_OUTPUTS = {outputs!r}", "", "",
            *program_lines(edges_program(p, edges), name="edge_values"), "", "",
            *program_lines(p, name="replayed", given={e: f"edges[{j}]" for j, e in enumerate(edges)})]


_MAIN = '''

def main():
    missing = missing_device(DEVICE)
    if missing:  # neither pass nor fail: skipped
        print(f"SKIP: cannot run this repro here: {{missing}}", file=sys.stderr)
        sys.exit(SKIP_EXIT)
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch._inductor.config.fallback_random = True
    for key, value in DYNAMO_CONFIG.items():  # the case's Dynamo settings (where this torch has them)
        if hasattr(torch._dynamo.config, key):
            setattr(torch._dynamo.config, key, value)
    compiled = {compile_expr}{rounding}
    result = run_schedule(compiled, program, make_inputs, mark_inputs, len(SIZES), compare_outputs, DEVICE,
                          dynamic_dims=DYNAMIC_DIMS, backward=BACKWARD, max_graphs=MAX_GRAPHS{by_design})
    lines, failed = describe(result, SIZES)
    for line in lines:
        print(line)
    print("FAIL: compiled and eager disagree" if failed else "OK: compiled and eager agree")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
'''

# Imports the repro's head has; the embedded modules' own are dropped.
_HEAD_IMPORTS = ("import re", "import sys", "import time", "import torch")


def _embedded(module) -> str:
    """module's source without its docstring and its top-level imports."""
    body = inspect.getsource(module).split('"""', 2)[2]
    lines = [ln for ln in body.splitlines() if ln not in _HEAD_IMPORTS]
    assert not any(ln.startswith(("import ", "from ")) for ln in lines), f"{module.__name__} imports more"
    return "\n".join(lines).strip() + "\n"


def compare_source() -> str:
    return "# The comparison rule (float64 reference, per-dtype tolerance).\n" + _embedded(_compare)


def loop_source() -> str:
    return "# The judging loop over the size schedule.\n" + _embedded(_loop)


def by_design_parts(p: Program) -> tuple[str, str, str]:
    """(lines defining what fuzz/judge/by_design.py says of p, the run_schedule
    arguments passing them, main()'s lines before the call): outputs whose
    strides are not judged, outputs of indices and the function that computes
    what they index, the values a discontinuous op reads (rounding_lines) and
    their compiled function. Empty for most programs."""
    exempt = stride_exempt(p)
    table, sources = index_table(p)
    lines, args = [], ""
    if exempt:
        args += f", stride_exempt={exempt!r}"
    if alias_exempt(p):
        args += f", alias_exempt={alias_exempt(p)!r}"
    if table:
        head, *body = program_lines(sources)
        lines = ["", "# Outputs of indices, (kind, dim, flag): ties may pick any tied index; and what they index.",
                 f"INDEX_OUTPUTS = {table!r}", "", "",
                 head.replace("def program(", "def indexed("), *body[:-1],
                 f"    return dict(zip(INDEX_OUTPUTS, {body[-1].strip()[len('return '):]}))"]
        args += ", index_outputs=INDEX_OUTPUTS, index_sources=indexed, indices_agree=indices_agree"
    rounding, before = rounding_lines(p), ""
    if rounding:
        lines += rounding
        args += ", rounding=rounding"
        before = ("\n    rounding = dict(edges=EDGES, outputs=EDGE_OUTPUTS, values=edge_values, replay=replayed,"
                  f"\n                    agree=value_agrees, compiled={compile_call(p, 'edge_values')[1]})")
    return "\n".join(lines), args, before


def repro_source(p: Program, title: str = "") -> str:
    imports, compile_expr = compile_call(p)
    extra_lines, by_design, rounding = by_design_parts(p)
    head = [f'"""{doc_text(title or "shapefuzz repro")}', "",
            "Runs the program eagerly (and in float64 as a reference) and compiled over the",
            "size schedule; exits 1 when compiled and eager disagree, 0 when they agree,",
            "77 when this machine lacks its device.", '"""',
            "import re", "import sys", "import time"] + imports
    return ("\n".join(head) + "\n" + module_source(p) + extra_lines + "\n\n" + compare_source() + "\n\n"
            + loop_source() + _MAIN.format(compile_expr=compile_expr, by_design=by_design, rounding=rounding))
