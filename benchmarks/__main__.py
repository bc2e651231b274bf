"""Run a benchmark by name: `python -m benchmarks NAME [ARGS...]`.

NAME.py runs with this interpreter, NAME.sh with bash, each with ARGS and the checkout first on PYTHONPATH, in
the current directory (run it from the checkout's root, as docs/benchmarks.md does). With no NAME, `list`, -h
or --help: every name with the start of its script's header. `python -m benchmarks NAME --help`
gives a Python benchmark's own options. benchmarks/README.md says what each measures and which figures of
docs/benchmarks.md it produced.
"""

from __future__ import annotations

import ast
import os
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNNERS = {".py": [sys.executable], ".sh": ["bash"]}


def benchmarks() -> dict[str, Path]:
    """name -> script: every .py and .sh file here, but the package's own (a leading underscore)."""
    return {p.stem: p for p in sorted(HERE.iterdir()) if p.suffix in RUNNERS and not p.name.startswith("_")}


def summary(path: Path) -> str:
    """The first paragraph of a script's docstring (.py) or of its header comment (.sh), on one line."""
    text = path.read_text()
    if path.suffix == ".py":
        lines = (ast.get_docstring(ast.parse(text)) or "").splitlines()
    else:
        lines = []
        for line in text.splitlines()[1:]:
            if not line.startswith("#") or line.startswith("#  "):  # the header ends, or its usage lines begin
                break
            lines.append(line.lstrip("#").strip())
    para = []
    for line in lines:
        if not line.strip():
            break
        para.append(line.strip())
    return " ".join(para)


def command(name: str, args: list[str]) -> tuple[list[str], dict]:
    """The argv and environment that run benchmark `name` with `args` (KeyError: no such benchmark)."""
    path = benchmarks()[name]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return RUNNERS[path.suffix] + [str(path), *args], env


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("list", "-h", "--help"):
        print(__doc__.strip() + "\n")
        found = benchmarks()
        width = max(map(len, found))
        for name, path in found.items():
            print(f"  {name:<{width}}  {textwrap.shorten(summary(path), 110 - width, placeholder=' ...')}")
        return 0
    try:
        cmd, env = command(argv[0], argv[1:])
    except KeyError:
        print(f"benchmarks: no benchmark named {argv[0]!r} (`python -m benchmarks list` names them)", file=sys.stderr)
        return 2
    sys.stdout.flush()
    os.execvpe(cmd[0], cmd, env)  # the benchmark's exit status and signals are the command's own


if __name__ == "__main__":
    sys.exit(main())
