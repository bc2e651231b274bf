"""docs/campaign.md's walk from the README to one case names files and the functions in them: each must be
there, so the walk is the code a campaign runs and not what it once ran. Every fuzz/ or strategies/ path
any doc names must exist too."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH = re.compile(r"\b((?:fuzz|strategies)/[\w/]+\.py)\b")


def _walk() -> str:
    text = (ROOT / "docs" / "campaign.md").read_text()
    return text.split("## A newcomer's walk", 1)[1].split("\n## ", 1)[0]


def named_pairs(text: str) -> list[tuple[str, str]]:
    """(path, name) for each `path` directly followed by a backticked name, as the walk writes them."""
    flat = " ".join(text.split())
    return [(m.group(1), m.group(2)) for m in re.finditer(r"((?:fuzz|strategies)/[\w/]+\.py) `(\w+)`", flat)]


def missing(pairs) -> list[str]:
    out = []
    for path, name in pairs:
        f = ROOT / path
        if not f.is_file():
            out.append(f"{path}: no such file")
        elif not re.search(rf"^\s*(?:def|class) {name}\b|^{name} = ", f.read_text(), re.M):
            out.append(f"{path}: no {name}")
    return out


def test_the_walk_names_functions_that_are_where_it_says():
    pairs = named_pairs(_walk())
    assert len(pairs) >= 15, pairs
    assert missing(pairs) == []


def test_the_check_sees_a_moved_function():
    assert missing([("fuzz/campaign/driver.py", "run_campaign")]) == []
    assert missing([("fuzz/campaign/driver.py", "no_such_function"), ("fuzz/campaign/nope.py", "x")]) == [
        "fuzz/campaign/driver.py: no no_such_function", "fuzz/campaign/nope.py: no such file"]


def test_every_path_the_docs_name_exists():
    docs = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    gone = sorted({f"{d.name}: {p}" for d in docs for p in PATH.findall(d.read_text()) if not (ROOT / p).exists()})
    assert gone == []
