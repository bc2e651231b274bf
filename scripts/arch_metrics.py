"""Structure figures for the architecture notes: modules, the largest ones,
import cycles between fuzz/ and strategies/ modules (module-level and
function-level imports both count: a lazy import is still a dependency),
the program-kind / backend branches outside the places that own them, and
the functions under fuzz/ longer than MAX_FUNCTION lines, and the comments
and strings that cite a tracker number ("issue 27") instead of saying why.

    python scripts/arch_metrics.py [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("fuzz", "strategies")
# Text that asks which kind a program is, or which backend/device it runs on.
BRANCH = re.compile(r"is_step_(program|file)|kind\s*==\s*[\"']steps|backend\s*==\s*[\"'](xla|openxla|inductor)"
                    r"|device\.(startswith|split)\(|hasattr\([^)]*[\"']blocks[\"']")

MAX_FUNCTION = 80  # lines of a function or method under fuzz/, its docstring included (read on one screen)


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def imports_of(name: str, path: Path, known: set) -> set:
    tree = ast.parse(path.read_text())
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def cycles(graph: dict[str, set]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


OWNERS = ("fuzz.kinds", "fuzz.judge.backends")  # where branching on kind or backend belongs


def long_functions(path: Path, limit: int = MAX_FUNCTION) -> list[str]:
    """"path:line name (N lines)" of each function or method in `path` longer than `limit` lines."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > limit:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    return out


# "issue 27", "Issues 13 and 14", "issue-41", "issue #40": a tracker number a reader of the code cannot open.
# Upstream's numbers (five digits or more: pytorch#139789, "issue #139789", a github.com/.../issues/N URL,
# which has no space or '#' after "issues") are facts about PyTorch and may stay.
CITATION = re.compile(r"\bissues?[\s#-]*(\d+)", re.IGNORECASE)


def _texts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each string and each comment in `path`, in line order; a comment on a line of its own
    is read with the whole-line comments right below it (a sentence wraps over them)."""
    texts, block = [], None
    with path.open("rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type == tokenize.STRING:
                texts.append([tok.start[0], tok.string])
            elif tok.type == tokenize.COMMENT:
                words = tok.string.lstrip("#").strip()
                alone = tok.line.lstrip().startswith("#")
                if alone and block is not None and block[2] == tok.start[0] - 1:
                    block[1] += " " + words
                    block[2] = tok.start[0]
                    continue
                block = [tok.start[0], words, tok.start[0]] if alone else None
                texts.append(block or [tok.start[0], words])
    return sorted((t[0], t[1]) for t in texts)


def tracker_citations() -> list[str]:
    """"path:line text" of each comment or string under fuzz/ and strategies/ that cites a tracker number."""
    out = []
    for p in modules().values():
        for line, text in _texts(p):
            for hit in CITATION.finditer(text):
                if len(hit.group(1)) < 5:
                    out.append(f"{p.relative_to(ROOT)}:{line}: {hit.group(0)}")
    return out


# The layers of findings and campaign, lowest first: a module imports only modules of its own layer or
# lower ones (function-level imports count). The process pool is the campaign's, but the shrink, the
# triage and the replay judge in it too, so it lies below everything of findings. The reference corpus
# reads another corpus's bug list, so it lies above the report layer.
LAYERS = (
    ("the process pool and the state dir's files", (
        "fuzz.campaign.workers", "fuzz.campaign.cold_start", "fuzz.campaign.disk", "fuzz.campaign.lifeline",
        "fuzz.campaign.sizing", "fuzz.campaign.errors", "fuzz.campaign.state_files")),
    ("signatures", ("fuzz.findings.signature",)),
    ("the corpus on disk", ("fuzz.findings.store",)),
    ("what is known of a bug", ("fuzz.findings.status",)),
    ("checks of one finding", ("fuzz.findings.sanitizer", "fuzz.findings.steadying")),
    ("shrink and triage", ("fuzz.findings.shrink", "fuzz.findings.triage", "fuzz.findings.deferred_triage")),
    ("replay", ("fuzz.findings.replay", "fuzz.findings.standalone")),
    ("what a person reads", ("fuzz.findings.report",)),
    ("entries settled against the corpus and its reference", (
        "fuzz.findings.dedupe", "fuzz.findings.reference")),
    ("the Ray cluster", ("fuzz.campaign.cluster",)),
    ("follow-ups", ("fuzz.campaign.followups",)),
    ("the campaign", ("fuzz.campaign",)),
)
MAX_PACKAGE = 20  # modules directly in one package directory: more and nothing but the names says what belongs


def layer_of(name: str, layers=LAYERS) -> int | None:
    """The index of the most specific layer holding module `name`, or None (outside findings and campaign)."""
    best, depth = None, -1
    for i, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            if (name == p or name.startswith(p + ".")) and p.count(".") > depth:
                best, depth = i, p.count(".")
    return best


def upward_imports(graph: dict[str, set], layers=LAYERS) -> list[str]:
    """'a -> b (layer of a < layer of b)' for each import that goes up the layers."""
    out = []
    for a, targets in sorted(graph.items()):
        la = layer_of(a, layers)
        for b in sorted(targets):
            lb = layer_of(b, layers)
            if la is not None and lb is not None and lb > la:
                out.append(f"{a} -> {b} ({layers[la][0]} imports {layers[lb][0]})")
    return out


def crowded_packages(mods: dict[str, Path], limit: int = MAX_PACKAGE) -> list[str]:
    """Package directories that hold more than `limit` modules of their own."""
    count: dict[Path, int] = {}
    for p in mods.values():
        if p.name != "__init__.py":
            count[p.parent] = count.get(p.parent, 0) + 1
    return [f"{d.relative_to(ROOT)}: {n} modules" for d, n in sorted(count.items()) if n > limit]


def measure(owners: tuple[str, ...] = OWNERS) -> dict:
    mods = modules()
    known = set(mods)
    graph = {m: imports_of(m, p, known) for m, p in mods.items()}
    lines = {m: len(p.read_text().splitlines()) for m, p in mods.items()}
    branches = []
    for m, p in mods.items():
        if any(m == o or m.startswith(o + ".") for o in owners):
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if BRANCH.search(line) and not line.lstrip().startswith("#"):
                branches.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    largest = sorted(lines.items(), key=lambda kv: -kv[1])[:5]
    long = [f for m, p in mods.items() if m.split(".")[0] == "fuzz" for f in long_functions(p)]
    return {"modules": len(mods), "lines": sum(lines.values()), "largest": largest,
            "cycles": cycles(graph), "branches": branches, "long_functions": long,
            "upward_imports": upward_imports(graph), "crowded_packages": crowded_packages(mods)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--owner", action="append", default=[],
                    help="a module or package allowed to branch on kind/backend (the kinds, the backend table)")
    args = ap.parse_args(argv)
    m = measure(tuple(args.owner) or OWNERS)
    if args.json:
        print(json.dumps(m, indent=1))
        return 0
    print(f"modules: {m['modules']}  lines: {m['lines']}")
    print("largest: " + ", ".join(f"{k} {v}" for k, v in m["largest"]))
    print(f"import cycles: {len(m['cycles'])}")
    for c in m["cycles"]:
        print("  " + " <-> ".join(c))
    print(f"kind/backend branches outside their owners: {len(m['branches'])}")
    for b in m["branches"]:
        print("  " + b)
    print(f"functions under fuzz/ over {MAX_FUNCTION} lines: {len(m['long_functions'])}")
    for f in m["long_functions"]:
        print("  " + f)
    cited = tracker_citations()
    print(f"comments and strings citing a tracker number: {len(cited)}")
    for c in cited:
        print("  " + c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
