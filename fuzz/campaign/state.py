"""Campaign state on disk, built so that `kill -9` loses nothing.

state_dir/
  config.json     the campaign's identity (backend, device, seed, strategy
                  options): resuming with another config is refused
  cases.jsonl     one line per judged case, appended as it completes; the
                  source of truth for counters and for what to skip on resume
  findings.jsonl  one line per finding (case index, signature, new/known),
                  written and fsynced before the case line
  state.json      a snapshot of the counters for `shapefuzz stats` (derived;
                  rebuilt from the logs when missing or stale), and where the
                  corpus is
  jobs.jsonl      the follow-up jobs on new entries (fuzz/campaign/followup.py)

Findings are counted twice over: raw signatures (the provisional keys the
campaign saw) and distinct bugs (the corpus entries those keys lead to once
shrunk entries are re-keyed and merged).

A case killed mid-flight has no line in cases.jsonl and is judged again on
resume; its finding, if already in findings.jsonl, is not recorded twice.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field

from fuzz.files import write_atomic


class StateError(ValueError):
    """The state directory belongs to another campaign or is unreadable."""


def _read_jsonl(path: str) -> list[dict]:
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line from a kill mid-write
    return out


def _append(path: str, record: dict, sync: bool) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        if sync:
            os.fsync(f.fileno())


@dataclass
class CampaignState:
    dir: str
    config: dict
    done: set = field(default_factory=set)
    outcomes: Counter = field(default_factory=Counter)
    findings_new: Counter = field(default_factory=Counter)  # by outcome
    findings_known: Counter = field(default_factory=Counter)
    finding_cases: set = field(default_factory=set)
    signatures: set = field(default_factory=set)
    new_signatures: set = field(default_factory=set)  # not known issues: each leads to a corpus entry
    corpus_dir: str | None = None  # where the findings went (absolute)
    followups: dict = field(default_factory=dict)  # follow-up job counts (fuzz/campaign/followup.py)
    _corpus: object = field(default=None, repr=False, compare=False)
    restarts: Counter = field(default_factory=Counter)
    seconds_total: float = 0.0  # summed worker seconds
    compile_seconds: float = 0.0
    cache_hits: int = 0  # torch_xla cases that reused a cached executable
    elapsed_before: float = 0.0  # wall time of earlier sessions
    session_start: float = field(default_factory=time.monotonic)

    @staticmethod
    def open(state_dir: str, config: dict) -> "CampaignState":
        config = json.loads(json.dumps(config))  # compare as stored: tuples read back as lists
        os.makedirs(state_dir, exist_ok=True)
        cfg_path = os.path.join(state_dir, "config.json")
        if os.path.exists(cfg_path):
            try:
                with open(cfg_path) as f:
                    old = json.load(f)
            except (OSError, json.JSONDecodeError) as e:
                raise StateError(f"{cfg_path} is unreadable: {e}") from None
            if old != config:
                diff = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
                raise StateError(f"{state_dir} holds a campaign with other settings ({', '.join(diff)}); "
                                 "use another --state dir or the same flags")
        else:
            write_atomic(cfg_path, json.dumps(config, indent=1))
        st = CampaignState(dir=state_dir, config=config)
        st._replay()
        return st

    def _replay(self) -> None:
        for rec in _read_jsonl(self.path("cases.jsonl")):
            self.done.add(rec["i"])
            self.outcomes[rec["outcome"]] += 1
            self.seconds_total += rec.get("seconds", 0.0)
            self.compile_seconds += rec.get("compile_seconds", 0.0)
            self.cache_hits += bool(rec.get("cache_hit"))
        for rec in _read_jsonl(self.path("findings.jsonl")):
            self.finding_cases.add(rec["i"])
            (self.findings_known if rec.get("known") else self.findings_new)[rec["outcome"]] += 1
            self.signatures.add(rec["key"])
            if not rec.get("known"):
                self.new_signatures.add(rec["key"])
        snap = self._snapshot_file()
        self.corpus_dir = snap.get("corpus_dir")
        self.elapsed_before = snap.get("elapsed", 0.0)
        self.restarts.update(snap.get("restarts", {}))

    def _snapshot_file(self) -> dict:
        try:
            with open(self.path("state.json")) as f:
                return json.load(f)
        except (OSError, json.JSONDecodeError):
            return {}

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
        self.signatures.add(key)
        if not known_url:
            self.new_signatures.add(key)
        return True

    def record_case(self, i: int, verdict: dict, worker_seconds: float | None, sync: bool = False) -> None:
        rec = {"i": i, "outcome": verdict["outcome"], "seconds": round(worker_seconds or verdict.get("seconds", 0), 4),
               "compile_seconds": round(verdict.get("compile_seconds", 0.0), 4),
               "recompiles": verdict.get("recompiles", 0)}
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
                "findings_known": dict(self.findings_known), "signatures": len(self.signatures),
                "bugs": self.bugs(), "followups": dict(self.followups), "corpus_dir": self.corpus_dir,
                "restarts": dict(self.restarts), "cache_hits": self.cache_hits}

    def bugs(self) -> int:
        """Distinct bugs: the corpus entries the new findings' signatures lead to
        now (a signature whose entry was merged counts with the entry it joined)."""
        if not self.corpus_dir:
            return len(self.new_signatures)
        from fuzz.findings.corpus import Corpus

        if self._corpus is None:
            self._corpus = Corpus(self.corpus_dir)
        held = {k: self._corpus.resolve(k) for k in self.new_signatures}
        return len({p.name if p is not None else k for k, p in held.items()})

    def save(self) -> None:
        write_atomic(self.path("state.json"), json.dumps(self.summary(), indent=1))

    @staticmethod
    def load_summary(state_dir: str) -> dict:
        """Counters rebuilt from the logs (for `stats`), with the snapshot's extras."""
        cfg_path = os.path.join(state_dir, "config.json")
        if not os.path.exists(cfg_path):
            raise StateError(f"{state_dir} is not a campaign state dir (no config.json)")
        with open(cfg_path) as f:
            st = CampaignState(dir=state_dir, config=json.load(f))
        st._replay()
        st.session_start = time.monotonic()
        from fuzz.campaign.followup import JobLog

        st.followups = JobLog(state_dir).refresh().counts()
        return st.summary()
