"""pytest plugin: a corpus as a regression suite of known compiler bugs.

    pytest -p fuzz.pytest_plugin --shapefuzz-corpus corpus/

(or, installed, through the `pytest11` entry point: just --shapefuzz-corpus).
Only the corpus is collected, not the ini's testpaths or the current
directory (test paths named on the command line still are). Every corpus
entry becomes one test item, named "KEY: SIGNATURE TEXT", that
judges the entry's program against the installed torch and is expected to
fail while the bug stands, like a strict xfail:

* XFAIL while the program still gives the entry's signature;
* FAILED with "fixed upstream? (entry ..., signature ...)" when it no longer
  does -- it passes now, or fails in another way (named in the message);
  time to check the upstream issue and drop or update the entry;
* ERROR for an entry that cannot be read (corrupt or hand-edited files);
* SKIPPED, with the reason, for an entry whose device or stack this machine
  lacks (a CUDA entry without a GPU, a torch_xla entry without torch_xla).

Programs are judged in the pytest process (fuzz.judge.runner.run_case, which also
silences torch's warnings and logs for the process) unless
--shapefuzz-isolate is given; crash and hang findings are always judged in
a subprocess (`python -m fuzz check`), bounded by --shapefuzz-timeout.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("shapefuzz", "corpus of known dynamic-shape compiler bugs")
    group.addoption("--shapefuzz-corpus", metavar="DIR", default=None,
                    help="run every entry of this corpus as a test that must still fail (strict xfail)")
    group.addoption("--shapefuzz-isolate", action="store_true", default=False,
                    help="judge each entry in a fresh subprocess (crash/hang entries always are)")
    group.addoption("--shapefuzz-timeout", type=float, default=600.0, metavar="S",
                    help="seconds per entry judged in a subprocess (default 600)")


def _item_name(d: Path) -> str:
    """KEY: SIGNATURE TEXT, read without validating (a corrupt entry still
    gets a test, which then errors)."""
    from fuzz.findings.store.corpus_files import read

    try:  # through the corpus-file loader all the same (a plain file, capped, its schema)
        text = read(d / "signature.json").get("text", "")
    except Exception:  # noqa: BLE001 - corrupt: the item errors in setup
        text = ""
    text = " ".join(str(text).split()).replace("::", ":")
    if len(text) > 160:
        text = text[:157] + "..."
    return f"{d.name}: {text}" if text else d.name


class CorpusCollector(pytest.Collector):
    """The corpus directory; its children are CorpusItems, one per entry."""

    def collect(self):
        from fuzz.findings.replay import entry_dirs

        for d in entry_dirs(self.path):
            yield CorpusItem.from_parent(self, name=_item_name(d), entry_dir=d)


class CorpusItem(pytest.Item):
    def __init__(self, *, entry_dir: Path, **kw):
        super().__init__(**kw)
        self.entry_dir = Path(entry_dir)
        self.entry = None
        self.add_marker(pytest.mark.shapefuzz_corpus)

    def setup(self) -> None:
        from fuzz.findings.store.corpus import Corpus, CorpusError

        try:
            self.entry = Corpus(self.entry_dir.parent).load(self.entry_dir)
            return
        except CorpusError as e:
            reason = e.reason
        pytest.fail(f"corrupt corpus entry {self.entry_dir}: {reason}", pytrace=False)

    def _judge(self):
        from fuzz.judge.verdict import Outcome

        from fuzz.kinds import kind_of

        config, p = self.config, self.entry.program
        kind = kind_of(p)
        missing = kind.unavailable(p)
        if missing:  # as replay does: this machine lacks the stack or device the entry needs
            pytest.skip(missing)
        isolate = (kind.isolated_by_default or config.getoption("shapefuzz_isolate")
                   or self.entry.verdict.outcome in (Outcome.CRASH, Outcome.HANG))
        if isolate:
            return kind.judge_isolated(p, timeout=config.getoption("shapefuzz_timeout"))
        return kind.judge(p)

    def runtest(self) -> None:
        from fuzz.findings.replay import same_bug

        e = self.entry
        try:
            v = self._judge()
        except Exception as exc:  # noqa: BLE001 - the program could not be judged at all
            v, why = None, f"{type(exc).__name__}: {exc}"
        if v is None:
            pytest.fail(f"could not judge entry {e.key} ({e.signature.text}): {why}", pytrace=False)
        same, note = same_bug(e, v)
        if same:
            pytest.xfail("still reproduces" + (f" ({note})" if note else ""))
        now = "it passes now" if not v.is_finding else f"it now gives another finding: {v.summary()}"
        pytest.fail(f"fixed upstream? (entry {e.key}, signature {e.signature.text}): the bug no longer "
                    f"reproduces; {now}. Entry: {self.entry_dir}", pytrace=False)

    def reportinfo(self):
        return self.parent.path, None, f"corpus entry {self.name}"


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "shapefuzz_corpus: a corpus entry replayed as an expected failure")
    if config.getoption("shapefuzz_corpus") and config.args_source is not config.ArgsSource.ARGS:
        # Only the corpus: not the testpaths of the project's ini (shapefuzz's own suite is 30 minutes)
        # nor the invocation dir. Test paths named on the command line are still collected.
        config.args = []


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so they apply to corpus items too
def pytest_collection_modifyitems(session, config, items) -> None:
    root = config.getoption("shapefuzz_corpus")
    if not root:
        return
    path = Path(root)
    if not path.is_dir():
        raise pytest.UsageError(f"--shapefuzz-corpus: no corpus directory {root!r}")
    path = path.resolve()
    try:
        nodeid = path.relative_to(config.rootpath).as_posix()
    except ValueError:
        nodeid = path.as_posix()
    collector = CorpusCollector.from_parent(session, name=path.name, path=path, nodeid=nodeid)
    # through the collection hooks, so the terminal counts the items and a
    # broken corpus is reported like any collection error
    ihook = collector.ihook
    ihook.pytest_collectstart(collector=collector)
    report = ihook.pytest_make_collect_report(collector=collector)
    ihook.pytest_collectreport(report=report)
    if report.passed:
        items.extend(report.result)
