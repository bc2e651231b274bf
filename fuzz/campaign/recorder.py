"""What a campaign does with each verdict (fuzz/campaign/driver.py's loop):
bucket a finding by signature, count it as known when a known-issues rule
matches, else record it in the corpus and queue its follow-up jobs, then log
the case. A finding whose minimal key needs no shrink (an exception named by
its message) and is held already -- by an entry, or a rule -- is counted
there: no entry, no follow-ups. A verdict that says the disk is full stops
the campaign before any of it is written (fuzz/campaign/disk.py). A finding's
program is kept in the state dir and its case line names it and the rule
that knew it (fuzz/campaign/state.py)."""

from __future__ import annotations

import os

from fuzz.campaign.disk import disk_full, says_disk_full
from fuzz.findings.sanitizer import wants_sanitizer
from fuzz.findings.signature import Signature, settled_signature, signature
from fuzz.judge.verdict import Verdict


class Recorder:
    def __init__(self, cfg, kind, state, corpus, known, followups, progress, result, reference=None):
        self.cfg, self.kind, self.state, self.corpus, self.known = cfg, kind, state, corpus, known
        self.reference = reference  # the corpus the user has (fuzz/findings/reference.py), or None
        self.followups, self.progress, self.result = followups, progress, result
        self.confirmed: set = set()  # signature keys of findings judged here: a later finding of one is not rerun
        self.programs: dict = {}  # case index -> its program, until its verdict comes
        self.guide = None  # --guided: fuzz/campaign/guide.py, told each case's new lines
        self.origin = os.path.abspath(cfg.state_dir)
        self.params = {"budget": cfg.shrink_budget, "timeout": cfg.timeout}  # the corpus: the runner is told it

    def job_types(self, v) -> list:
        cfg = self.cfg
        # sanitizer first: it runs the entry's repro as found, before shrinking rewrites it
        types = ["sanitize"] if cfg.sanitize and cfg.on_cuda() and wants_sanitizer(v.message) else []
        types += ["shrink"] if cfg.shrink else []
        return types + (["triage"] if cfg.triage and self.kind.triage is None else [])  # of the shrunk program

    def _settled(self, sig, v, p):
        """For a finding whose minimal key needs no shrink (signature.settled_signature): the rule that
        names that key, if one does. Else, when the corpus holds an entry with that key, the index sends
        the finding's provisional key there, so recording it counts a hit (no new entry, no follow-ups)."""
        settled = settled_signature(v, p)
        if settled is None:
            return None
        rule = self.known.match(settled, v, p) if self.known else None
        if rule is None and self.corpus.path_of(settled.key).is_dir():
            self.corpus._update_index({sig.key: settled.key})  # as standalone.set_aside does
        return rule

    def _known_text(self, known_as: str, row) -> str:
        if not known_as.startswith("reference:"):
            return known_as
        row = row or (self.reference.for_key(known_as.split(":", 1)[1]) if self.reference else None)
        return f"in the reference corpus: {row.text()}" if row else known_as

    def take(self, i, vd: dict, info: dict) -> None:
        """One verdict: its finding (if any) recorded, then the case logged."""
        p = judged = self.programs.pop(i)
        if info.get("program"):  # the standalone form of a history-dependent finding
            from fuzz.program.loading import load_program

            p = load_program(info["program"])
        v = Verdict.from_dict(vd)
        if says_disk_full(v.message):  # not a finding: the compiler could not write
            raise disk_full(f"case {i}: {v.summary()[:160]}")
        known_as, programs = None, None
        if v.is_finding:  # its program kept first: a kill before the log lines judges the case again
            programs = self.state.record_programs(i, judged, p if p is not judged else None)
            known_as = self._finding(i, v, p, info)
        new = self.state.new_lines(info["coverage"]) if "coverage" in info else None
        # the pool line first: killed before coverage.txt has the lines, a resume finds them new again
        origin = self.guide.record(i, judged, len(new) if new is not None else None) if self.guide else None
        new_lines = self.state.add_lines(new) if new is not None else None
        self.state.record_case(i, vd, info.get("wall"), sync=v.is_finding, node=info.get("node"), new_lines=new_lines,
                               origin=origin, known=known_as, programs=programs)

    def _in_reference(self, sig, v, p):
        """The reference corpus's row a finding belongs to by its key (or the minimal key of an exception that
        needs no shrink), when this corpus holds no entry of it; None otherwise. A shrunk entry is matched by
        its cause in its follow-up (fuzz/findings/dedupe.py)."""
        if self.reference is None or self.corpus.resolve(sig.key) is not None:
            return None
        row = self.reference.for_key(sig.key)
        settled = settled_signature(v, p) if row is None else None
        return row or (self.reference.for_key(settled.key) if settled is not None else None)

    def _known_as(self, sig, v, p) -> str | None:
        """What knows the finding: a known-issues rule, or the reference row of an entry set aside in known/."""
        from fuzz.findings.store.corpus import KNOWN

        known, corpus = self.known, self.corpus
        rule = known.match(sig, v, p) if known else None
        held = corpus.resolve(sig.key) if rule is None else None
        if known and held is not None and held.name != sig.key:  # a rule may name the merged entry's key
            rule = known.match(Signature(held.name, ""), v, p)
        if rule is None and held is not None and held.parent.name == KNOWN:
            return f"reference:{(corpus.load(held).meta.get('reference') or {}).get('entry', held.name)}"
        if rule is None and held is None:
            rule = self._settled(sig, v, p)
        return rule.name if rule else None

    def _finding(self, i, v, p, info) -> str | None:
        """Record a finding; the name of the known-issues rule or reference row it matched, if one did."""
        state, corpus = self.state, self.corpus
        sig = signature(v, p)
        self.confirmed.add(sig.key)  # a finding verdict held on its rerun (else it is FLAKY)
        known_as = self._known_as(sig, v, p)
        row = self._in_reference(sig, v, p) if known_as is None else None
        entry, is_new = (None, False)
        if i not in state.finding_cases and row is not None:  # kept whole in known/, its keys counted there
            from fuzz.findings.reference import set_known

            path, _ = corpus.record(p, v, sig, origin=self.origin, env=info.get("env") or None)
            set_known(corpus, path, row)
            known_as = f"reference:{row.key}"
        elif i not in state.finding_cases and known_as and known_as.startswith("reference:"):
            corpus.record(p, v, sig, origin=self.origin)  # a hit on the entry set aside in known/
        elif i not in state.finding_cases and known_as is None:
            # env.json: where it was judged (a Ray node), not where it was generated
            uncounted = len(corpus.uncounted)
            path, is_new = corpus.record(p, v, sig, origin=self.origin, env=info.get("env") or None)
            if len(corpus.uncounted) > uncounted:  # once per entry
                self.progress.note(f"warning: {corpus.uncounted[path]}")
            entry = str(path)
            if is_new:
                self.result.new_entries.append(entry)
            # a kill between making the entry and queueing its jobs: queue them on the rerun
            if is_new or (path.name == sig.key and not self.followups.known(sig.key)
                          and corpus.origin(path) == self.origin):
                self.followups.queue(sig.key, self.job_types(v), self.params)
        logged = state.record_finding(i, v.outcome.value, sig.key, sig.text, known_as, entry, is_new)
        if logged and (is_new or known_as):
            tag = f"known ({self._known_text(known_as, row)})" if known_as else "NEW"
            self.progress.note(f"[{i}] {tag} {v.summary()[:300]}" + (f"\n      -> {entry}" if is_new else ""))
        return known_as
