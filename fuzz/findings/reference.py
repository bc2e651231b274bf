"""A campaign knows the corpus its user has: findings of causes a reference corpus holds are counted there.

A fresh campaign used to list again causes the corpus its user already has (the shipped corpus/, a team's
shared one), as new rows "not searched upstream yet". Now a campaign's corpus names a reference corpus in
its `.reference.json` (`shapefuzz run --known-corpus DIR`; by default the corpus of the checkout shapefuzz
runs from, never a dir found where the command is started), and a finding whose key, or, once shrunk,
whose cause (its cluster: fuzz/findings/status/clusters.py) matches an entry there is set aside under
CORPUS/known/<key>, whole and marked with the reference row it belongs to (its status and upstream link),
like the entries set aside in unconfirmed/: no entry of the campaign's, no further follow-up, and later
hits of its keys are counted there. `bugs` lists them apart, under the reference row.

The reference is only read, through the same loaders as any corpus (it is data someone else wrote).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from fuzz.findings.store.corpus import KNOWN, Corpus, _now

REFERENCE_FILE = ".reference.json"  # in a campaign's corpus: {"corpus": the reference corpus's path}


@dataclass(frozen=True)
class Row:
    """A reference corpus's row a finding belongs to."""
    corpus: str  # the reference corpus's path
    key: str  # the row's representative entry
    status: str
    upstream: str
    title: str

    def text(self) -> str:
        return f"{self.key} in {self.corpus} ({self.status}; {self.upstream})"


def package_corpus() -> Path | None:
    """The corpus of the checkout shapefuzz runs from (its corpus/ beside the fuzz package, in a tree that
    is a checkout: a pyproject.toml there), or None where shapefuzz is installed as a package."""
    import fuzz

    root = Path(fuzz.__file__).resolve().parent.parent
    corpus = root / "corpus"
    if (root / "pyproject.toml").is_file() and corpus.is_dir() and not corpus.is_symlink():
        return corpus
    return None


class Reference:
    """A reference corpus, read once: its rows by every key that leads to them (entry keys, the keys the
    entries absorbed, its index's keys) and by cluster."""

    def __init__(self, root):
        from fuzz.findings.report.bugs import PENDING, bug_rows
        from fuzz.findings.status.clusters import cluster_key

        self.root = Path(root)
        corpus = Corpus(self.root)
        rows = bug_rows(self.root, [])
        entries = {e.key: e for e in corpus.entries()}
        self.by_key: dict[str, Row] = {}
        self.by_cluster: dict[tuple, Row] = {}
        for r in rows:
            if r.status == PENDING:  # not shrunk: its program is not the bug's yet
                continue
            row = Row(corpus=str(self.root), key=r.key, status=r.status, upstream=r.upstream, title=r.title)
            for k in [r.key, *r.variants]:
                e = entries.get(k)
                if e is None:
                    continue
                self.by_key[k] = row
                for absorbed in e.variants:
                    self.by_key.setdefault(absorbed, row)
                self.by_cluster.setdefault(cluster_key(e), row)
        try:
            index = corpus.index()
        except Exception:  # noqa: BLE001 - an unreadable index of someone else's corpus: its keys alone are lost
            index = {}
        for k, target in index.items():
            row = self.by_key.get(target.rsplit("/", 1)[-1])
            if row is not None and "/" not in target:
                self.by_key.setdefault(k, row)

    def __len__(self) -> int:
        return len({r.key for r in self.by_key.values()})

    def for_key(self, key: str) -> Row | None:
        return self.by_key.get(key)

    def for_entry(self, entry) -> Row | None:
        """The row a shrunk entry belongs to: by its key, else by its cause (cluster)."""
        from fuzz.findings.status.clusters import cluster_key

        if not entry.shrunk and not entry.minimal:
            return self.for_key(entry.key)
        return self.for_key(entry.key) or self.by_cluster.get(cluster_key(entry))


def write_reference(corpus_root, reference_root) -> None:
    """Name `reference_root` as the reference of the corpus at `corpus_root` (a campaign's, at its start)."""
    from fuzz.files import dumps, write_atomic

    root = Path(corpus_root)
    root.mkdir(parents=True, exist_ok=True)
    write_atomic(root / REFERENCE_FILE, dumps({"corpus": os.path.abspath(reference_root)}))


def reference_root(corpus_root) -> Path | None:
    """The reference corpus a corpus names (None: none, or it is gone). A malformed file is CorpusFileError."""
    from fuzz.findings.store.corpus_files import read

    path = Path(corpus_root) / REFERENCE_FILE
    if not path.exists() and not path.is_symlink():
        return None
    named = Path(read(path)["corpus"])
    return named if named.is_dir() and os.path.realpath(named) != os.path.realpath(corpus_root) else None


_loaded: dict = {}


def reference_of(corpus_root) -> Reference | None:
    """The Reference a corpus names, read once per process (and again when its index changes)."""
    root = reference_root(corpus_root)
    if root is None:
        return None
    try:
        stamp = os.stat(root / ".index.json").st_mtime_ns
    except OSError:
        stamp = None
    key = (os.path.realpath(root), stamp)
    if key not in _loaded:
        _loaded.clear()
        _loaded[key] = Reference(root)
    return _loaded[key]


def set_known(corpus: Corpus, entry_dir, row: Row) -> Path:
    """Move an entry to CORPUS/known/<key>, marked with the reference row it belongs to, its keys pointing
    there; returns where it is now (merged into the one there when that cause was set aside before)."""
    corpus.set_meta(entry_dir, "reference", {"corpus": row.corpus, "entry": row.key, "status": row.status,
                                             "upstream": row.upstream, "checked": _now()})
    return corpus.move_aside(entry_dir, KNOWN)
