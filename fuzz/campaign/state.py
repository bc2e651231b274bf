"""Campaign state on disk, built so that `kill -9` loses nothing.

state_dir/
  config.json     the campaign's identity (backend, device, seed, strategy
                  options): resuming with another config is refused
  cases.jsonl     one line per judged case, appended as it completes; the
                  source of truth for counters and for what to skip on resume.
                  A finding's line names its program file ("program") and,
                  when a known-issues rule matched it, the rule ("known": its
                  URL, else "known-issues rule N")
  programs/       a finding case's program as judged, <case index>.json (and
                  <case index>.finding.json when the finding is of another
                  form: a history-dependent step finding's standalone one), so
                  the case can be had again where the seed draws another stream
                  (another Python, torch or Hypothesis); one file per finding
                  case, a few KB each (`shapefuzz check STATE/programs/I.json`)
  findings.jsonl  one line per finding (case index, signature, new/known),
                  written and fsynced before the case line
  state.json      a snapshot of the counters for `shapefuzz stats` (derived;
                  rebuilt from the logs when missing), with what the logs
                  cannot give: earlier sessions' wall time and worker restarts,
                  and where the corpus is
  lock            held (fcntl.flock) by the one `shapefuzz run` using the
                  dir; it holds that run's pid
  jobs.jsonl      the follow-up jobs on new entries (fuzz/campaign/followups/runner.py)
  batches.jsonl   one line per generated batch of programs: how many programs
                  precede the next batch and this batch's program keys, so a
                  resumed campaign draws again from the batch of its first
                  unjudged case, not from the first batch
  coverage.txt    --coverage: each compiler line any case reached, once
                  ("_inductor/graph.py:123"; fuzz/judge/coverage.py)
  pool.jsonl      --guided: the programs that reached new lines, and the
  guide.jsonl     pool size each chunk of mutants drew from (fuzz/campaign/guide.py)

Findings are counted twice over: raw signatures (the provisional keys the
campaign saw) and distinct bugs (the corpus entries those keys lead to once
shrunk entries are re-keyed and merged).

A case killed mid-flight has no line in cases.jsonl and is judged again on
resume; its finding, if already in findings.jsonl, is not recorded twice.
A last line torn by a kill mid-write is dropped when the dir is reopened.
Anything else unreadable (bad JSON, a record without its fields, another
campaign's config) is a StateError naming the file: it is reported, never
overwritten.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field

from fuzz.campaign.errors import StateError  # re-exported: callers import it from here
from fuzz.campaign.state_files import no_symlinked_dirs as _no_symlinked_dirs
from fuzz.campaign.state_files import read_coverage, read_log_bytes
from fuzz.files import append_line, confined, dumps, open_regular, write_atomic

PROGRAMS = "programs"  # the finding cases' programs, one file per case

LOCK = "lock"
LOGS = ("cases.jsonl", "findings.jsonl", "batches.jsonl", "pool.jsonl", "guide.jsonl")  # jobs.jsonl: followup.py


def _read_jsonl(path: str) -> list[dict]:
    """The records of a log, each checked by its schema (fuzz/campaign/state_files.py); StateError for a bad
    line other than a torn last one."""
    from fuzz.campaign.state_files import read_log

    return read_log(path)


def _drop_torn_tail(path: str) -> None:
    """Cut a last line without its newline (a kill mid-append), so the next
    append starts a line of its own."""
    try:
        fd = open_regular(path, os.O_RDWR)
    except FileNotFoundError:
        return
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = read_log_bytes(path)
            os.ftruncate(fd, data.rfind(b"\n") + 1)
    finally:
        os.close(fd)


def _read_json(path: str, what: str) -> dict | None:
    """config.json or state.json, checked by its schema; None when absent; StateError when unreadable."""
    from fuzz.campaign.state_files import read_document

    return read_document(path, what)


def _append(path: str, record: dict, sync: bool) -> None:
    append_line(path, json.dumps(record) + "\n", sync)


def _lock(state_dir: str):
    """Hold the dir's lock file: a file object whose flock lasts until it is
    closed (close(), the state object dropped, or this process dying).
    StateError naming the holder when another run has it."""
    path = os.path.join(state_dir, LOCK)
    try:
        f = os.fdopen(open_regular(path, os.O_RDWR | os.O_CREAT), "r+")
    except OSError as e:
        raise StateError(f"cannot lock state dir {state_dir}: {e.strerror or e}") from None
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        f.seek(0)
        holder = "".join(c for c in f.read(32) if c.isdigit())
        f.close()
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise StateError(f"state dir {state_dir} is in use by pid {holder or '?'} (another shapefuzz run); "
                             "wait for it to finish, or use another --state dir") from None
        raise StateError(f"cannot lock state dir {state_dir}: {e.strerror}") from None
    f.truncate(0)
    f.write(f"{os.getpid()}\n")
    f.flush()
    return f


_CONFIG_FIX = "the campaign's settings are unknown: fix it, or use another --state dir"
_SNAPSHOT_FIX = ("it holds the wall time and worker restarts of earlier sessions: fix it, or remove it to "
                 "count them from zero")


@dataclass
class CampaignState:
    dir: str
    config: dict
    done: set = field(default_factory=set)
    outcomes: Counter = field(default_factory=Counter)
    findings_new: Counter = field(default_factory=Counter)  # by outcome
    findings_known: Counter = field(default_factory=Counter)
    known_by_rule: Counter = field(default_factory=Counter)  # rule name (URL) -> findings it matched
    rejected_by_rule: Counter = field(default_factory=Counter)  # by-design rule -> cases it judged (rejected)
    finding_cases: set = field(default_factory=set)
    signatures: set = field(default_factory=set)
    new_signatures: set = field(default_factory=set)  # not known issues: each leads to a corpus entry
    corpus_dir: str | None = None  # where the findings went (absolute)
    followups: dict = field(default_factory=dict)  # follow-up job counts (fuzz/campaign/followups/runner.py)
    _corpus: object = field(default=None, repr=False, compare=False)
    restarts: Counter = field(default_factory=Counter)
    nodes: dict = field(default_factory=dict)  # --ray: this session's nodes (fuzz/campaign/cluster/pool.py node_summary)
    node_cases: Counter = field(default_factory=Counter)  # --ray: cases judged per node, every session
    seconds_total: float = 0.0  # summed worker seconds
    compile_seconds: float = 0.0
    cache_hits: int = 0  # torch_xla cases that reused a cached executable
    lines: set = field(default_factory=set)  # --coverage: compiler lines reached (coverage.txt)
    batches: int = 0  # generated batches recorded in batches.jsonl
    lineage: Counter = field(default_factory=Counter)  # --guided: mutants, fresh cases, and those reaching new lines
    elapsed_before: float = 0.0  # wall time of earlier sessions
    wind_down_at: float | None = None  # time.time() when this session's cases stopped for the follow-ups (winddown.py)
    session_start: float = field(default_factory=time.monotonic)
    _lock: object = field(default=None, repr=False, compare=False)  # the lock file, held while open

    @staticmethod
    def open(state_dir: str, config: dict) -> "CampaignState":
        """The state of the campaign `config` in state_dir, locked for this
        process until close(); a new dir is created. StateError, before
        anything is written, when the dir holds another campaign, is
        unreadable, or is in use."""
        config = json.loads(json.dumps(config))  # compare as stored: tuples read back as lists
        if os.path.exists(state_dir):
            if not os.path.isdir(state_dir):
                raise StateError(f"state dir {state_dir} is not a directory")
            CampaignState._check(state_dir, config)  # read only: a bad dir is left as it is
            _no_symlinked_dirs(state_dir)
        os.makedirs(state_dir, exist_ok=True)
        lock = _lock(state_dir)
        try:
            CampaignState._check(state_dir, config)  # again, now that no other run can write
            cfg_path = os.path.join(state_dir, "config.json")
            if not os.path.exists(cfg_path):
                write_atomic(cfg_path, json.dumps(config, indent=1))
            for log in LOGS:
                _drop_torn_tail(os.path.join(state_dir, log))
            st = CampaignState(dir=state_dir, config=config)
            st._replay()
        except BaseException:
            lock.close()
            raise
        st._lock = lock
        return st

    @staticmethod
    def _check(state_dir: str, config: dict | None) -> dict | None:
        """The stored config; StateError when it or another file is unreadable,
        or (config given) the stored one differs."""
        old = _read_json(os.path.join(state_dir, "config.json"), _CONFIG_FIX)
        if old is not None and config is not None and old != config:
            diff = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
            raise StateError(f"{state_dir} holds a campaign with other settings ({', '.join(diff)}); "
                             "use another --state dir or the same flags")
        for log in LOGS:
            _read_jsonl(os.path.join(state_dir, log))
        from fuzz.campaign.followups.runner import JobLog  # lazy: it pulls in the follow-up runner

        JobLog(state_dir).refresh()  # jobs.jsonl: StateError when corrupt
        _read_json(os.path.join(state_dir, "state.json"), _SNAPSHOT_FIX)
        return old

    @staticmethod
    def stored_config(state_dir: str) -> dict | None:
        """The campaign identity a state dir records; None when it has none or it cannot be read (opening
        the dir then says why)."""
        try:
            return _read_json(os.path.join(state_dir, "config.json"), _CONFIG_FIX)
        except (StateError, OSError):
            return None

    def close(self) -> None:
        """Release the dir's lock (also released when this object is dropped or this process dies)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.close()

    def _replay(self) -> None:
        for rec in _read_jsonl(self.path("cases.jsonl")):
            self.done.add(rec["i"])
            self.outcomes[rec["outcome"]] += 1
            self.seconds_total += _number(rec.get("seconds"))
            self.compile_seconds += _number(rec.get("compile_seconds"))
            self.cache_hits += bool(rec.get("cache_hit"))
            if isinstance(rec.get("rule"), str):
                self.rejected_by_rule[rec["rule"]] += 1
            if isinstance(rec.get("node"), str):
                self.node_cases[rec["node"]] += 1
            self._count_lineage(rec)
        for rec in _read_jsonl(self.path("findings.jsonl")):
            self.finding_cases.add(rec["i"])
            (self.findings_known if rec.get("known") else self.findings_new)[rec["outcome"]] += 1
            if rec.get("known"):
                self.known_by_rule[rec["known"]] += 1
            self.signatures.add(rec["key"])
            if not rec.get("known"):
                self.new_signatures.add(rec["key"])
        self.lines = read_coverage(self.path("coverage.txt"))  # a torn last line: reached again
        snap = self._snapshot_file()
        self.corpus_dir = snap.get("corpus_dir")
        self.elapsed_before = _number(snap.get("elapsed"))
        restarts = snap.get("restarts", {})
        self.restarts.update({k: v for k, v in restarts.items() if isinstance(v, int)}
                             if isinstance(restarts, dict) else {})

    def generation_start(self):
        """Where generation resumes (fuzz.campaign.generate.Checkpoint): the
        last recorded batch end at or before the first case not judged yet."""
        import itertools

        from fuzz.campaign.generate import checkpoint

        records = [(r["batch"], r["produced"], r["keys"]) for r in _read_jsonl(self.path("batches.jsonl"))]
        self.batches = len(records)
        return checkpoint(records, next(i for i in itertools.count() if i not in self.done))

    def record_batch(self, batch: int, produced: int, keys: list) -> None:
        """generate()'s on_batch: the next batch not recorded yet is appended (no
        fsync: a lost line only makes a resume draw more batches again)."""
        if batch == self.batches:
            _append(self.path("batches.jsonl"), {"batch": batch, "produced": produced, "keys": keys}, sync=False)
            self.batches += 1

    def _snapshot_file(self) -> dict:
        return _read_json(self.path("state.json"), _SNAPSHOT_FIX) or {}

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    @property
    def cases(self) -> int:
        return len(self.done)

    @property
    def elapsed(self) -> float:
        return self.elapsed_before + time.monotonic() - self.session_start

    def record_finding(self, i: int, outcome: str, key: str, text: str, known_url: str | None, entry: str | None,
                       new_signature: bool) -> bool:
        """Log a finding once per case; False if this case was logged already."""
        if i in self.finding_cases:
            return False
        _append(self.path("findings.jsonl"), {"i": i, "outcome": outcome, "key": key, "text": text,
                                              "known": known_url, "entry": entry, "new_signature": new_signature,
                                              "time": time.time()}, sync=True)
        self.finding_cases.add(i)
        (self.findings_known if known_url else self.findings_new)[outcome] += 1
        if known_url:
            self.known_by_rule[known_url] += 1
        self.signatures.add(key)
        if not known_url:
            self.new_signatures.add(key)
        return True

    def record_programs(self, i: int, judged, finding=None) -> dict:
        """Keep finding case i's program (and the finding's own form, when another) under programs/, written
        atomically before the case's log lines; the paths relative to the state dir, as cases.jsonl names them."""
        os.makedirs(confined(self.dir, self.path(PROGRAMS)), exist_ok=True)
        out = {}
        for field_, suffix, p in (("program", "", judged), ("finding_program", ".finding", finding)):
            if p is not None:
                rel = os.path.join(PROGRAMS, f"{i}{suffix}.json")
                write_atomic(confined(self.dir, self.path(rel)), dumps(p.to_dict()))  # as a corpus entry stores it
                out[field_] = rel
        return out

    def new_lines(self, lines) -> list:
        """Of a case's compiler lines (fuzz/judge/coverage.py), those no case had reached."""
        return sorted({x for x in lines if isinstance(x, str) and "\n" not in x} - self.lines)

    def record_coverage(self, lines: list) -> int:
        """Add a case's compiler lines to coverage.txt; how many no case had reached."""
        return self.add_lines(self.new_lines(lines))

    def add_lines(self, new: list) -> int:
        """Append lines new_lines() found new to coverage.txt; how many."""
        if new:
            append_line(self.path("coverage.txt"), "".join(x + "\n" for x in new), sync=False)
            self.lines.update(new)
        return len(new)

    def _count_lineage(self, rec: dict) -> None:
        if "new_lines" in rec:
            kind = "mutants" if "parent" in rec else "fresh"
            self.lineage[kind] += 1
            self.lineage[f"{kind}_reaching_new"] += _number(rec["new_lines"]) > 0

    def record_case(self, i: int, verdict: dict, worker_seconds: float | None, sync: bool = False,
                    node: str | None = None, new_lines: int | None = None, origin: dict | None = None,
                    known: str | None = None, programs: dict | None = None) -> None:
        rec = {"i": i, "outcome": verdict["outcome"], "seconds": round(worker_seconds or verdict.get("seconds", 0), 4),
               "compile_seconds": round(verdict.get("compile_seconds", 0.0), 4),
               "recompiles": verdict.get("recompiles", 0),
               "at": round(time.time(), 2)}  # when it was recorded: rates over a window (scripts/case_rate.py)
        if new_lines is not None:  # --coverage: compiler lines no earlier case reached
            rec["new_lines"] = new_lines
        if origin is not None:  # --guided: a mutant's parent case and edits (fuzz/campaign/guide.py)
            rec.update(origin)
        if known is not None:  # the known-issues rule the finding matched (Rule.name)
            rec["known"] = known
        if verdict.get("rule") and isinstance(verdict["rule"], str):  # the by-design rule of a rejected case
            rec["rule"] = verdict["rule"]
            self.rejected_by_rule[rec["rule"]] += 1
        rec.update(programs or {})  # a finding's program files (record_programs)
        self._count_lineage(rec)
        if node is not None:  # --ray: the node that judged it
            rec["node"] = node
            self.node_cases[node] += 1
        if "cached_compiles" in verdict.get("numbers", {}):  # torch_xla: did the case reuse an executable?
            rec["cache_hit"] = verdict["numbers"]["cached_compiles"] > 0
            self.cache_hits += rec["cache_hit"]
        _append(self.path("cases.jsonl"), rec, sync=sync)
        self.done.add(i)
        self.outcomes[rec["outcome"]] += 1
        self.seconds_total += rec["seconds"]
        self.compile_seconds += rec["compile_seconds"]

    def summary(self) -> dict:
        el = self.elapsed
        return {"state_dir": self.dir, "config": self.config, "cases": self.cases, "elapsed": round(el, 1),
                "cases_per_second": round(self.cases / el, 4) if el > 0 else 0.0,
                "compile_share": round(self.compile_seconds / self.seconds_total, 3) if self.seconds_total else None,
                "outcomes": dict(self.outcomes), "findings_new": dict(self.findings_new),
                "findings_known": dict(self.findings_known), "known_by_rule": dict(self.known_by_rule),
                "rejected_by_rule": dict(self.rejected_by_rule),
                "signatures": len(self.signatures),
                "bugs": self.bugs(), "followups": dict(self.followups), "corpus_dir": self.corpus_dir,
                "restarts": dict(self.restarts), "cache_hits": self.cache_hits,
                **({"wind_down_at": self.wind_down_at} if self.wind_down_at else {}),
                **({"compiler_lines": len(self.lines)} if self.lines else {}),
                **({"lineage": dict(self.lineage)} if self.lineage["mutants"] else {}),
                **({"nodes": self.nodes} if self.nodes else {}),
                **({"node_cases": dict(self.node_cases)} if self.node_cases else {})}

    def bugs(self) -> int:
        """Distinct bugs: the corpus entries the new findings' signatures lead to
        now (a signature whose entry was merged counts with the entry it joined)."""
        if not self.corpus_dir:
            return len(self.new_signatures)
        from fuzz.findings.store.corpus import Corpus

        if self._corpus is None:
            self._corpus = Corpus(self.corpus_dir)
        from fuzz.findings.store.corpus import SET_ASIDE

        held = {k: self._corpus.resolve(k) for k in self.new_signatures}
        # an entry set aside (it does not fail alone in a fresh process, or its cause is in the reference
        # corpus) is no bug to count
        return len({p.name if p is not None else k for k, p in held.items()
                    if p is None or p.parent.name not in SET_ASIDE})

    def save(self) -> None:
        write_atomic(self.path("state.json"), json.dumps(self.summary(), indent=1))

    @staticmethod
    def load_summary(state_dir: str) -> dict:
        """Counters rebuilt from the logs (for `stats`), with the snapshot's
        extras; read only (a running campaign may hold the dir)."""
        if not os.path.isdir(state_dir):
            raise StateError(f"{state_dir} is not a campaign state dir (no such directory)")
        config = CampaignState._check(state_dir, None)
        if config is None:
            raise StateError(f"{state_dir} is not a campaign state dir (no config.json)")
        st = CampaignState(dir=state_dir, config=config)
        st._replay()
        st.session_start = time.monotonic()
        nodes = st._snapshot_file().get("nodes")  # the last --ray session's nodes
        st.nodes = nodes if isinstance(nodes, dict) else {}
        from fuzz.campaign.followups.runner import JobLog

        st.followups = JobLog(state_dir).refresh().counts()
        return st.summary()


def case_program(state_dir: str, i: int, finding: bool = False):
    """Finding case i's kept program (record_programs), loaded and checked as any program file: size-capped,
    no symlink, duplicate keys refused, then its schema. StateError naming the file when it is missing or bad."""
    from fuzz.datafile import DataFileError, read_json
    from fuzz.program.ir import ProgramError
    from fuzz.program.loading import load_program
    from fuzz.program.schema import MAX_PROGRAM_BYTES

    path = os.path.join(state_dir, PROGRAMS, f"{int(i)}{'.finding' if finding else ''}.json")
    if not os.path.lexists(path):
        raise StateError(f"{path}: no program kept for case {i} (not a finding case, or a state dir from before "
                         "programs were kept)")
    try:
        return load_program(read_json(path, MAX_PROGRAM_BYTES, follow_symlinks=False))
    except DataFileError as e:
        raise StateError(str(e)) from None
    except (ProgramError, RecursionError) as e:
        raise StateError(f"{path}: {e}") from None


def _number(v) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
