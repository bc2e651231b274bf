"""Live progress for long campaigns: a rich table on a terminal, a plain line
every PLAIN_EVERY seconds otherwise (logs, CI, nohup), also while no case
finishes (a cold start: workers importing torch, the first compiles), and one
at once when the first case is done."""

from __future__ import annotations

import os
import sys
import threading
import time

PLAIN_EVERY = 30.0
WAITING = "workers starting, then the first compiles"  # what a campaign waits for before its first case is done


def startup_line(workers: int | None, *, pch: bool = False, ray: bool = False) -> str:
    """What a campaign does before its first case is done, said at its start: that part is the slowest
    (a quick start on a loaded 2-CPU machine: ~15 s for the workers to import torch, then ~60 s for the
    first case, Inductor's precompiled C++ header made in it)."""
    if ray:
        text = "judging on the Ray cluster: each node starts its workers (each imports torch) first"
    elif not workers:
        text = "judging in this process"
    else:
        text = f"starting {workers} sandboxed worker{'s' * (workers > 1)} (importing torch)"
    if pch:
        text += ("; the first cases also build Inductor's precompiled C++ header, once on this machine (a minute "
                 "or more on a loaded one; kept for later runs)")
    return text + f"; a progress line every {PLAIN_EVERY:g} s"


def _fmt_counts(c: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1])) or "none"


def summary_table(s: dict):
    from rich.table import Table

    from fuzz.terminal import markup

    class Rows(Table):  # a state dir is data: every cell shown as text, never read as markup (fuzz/terminal.py)
        def add_row(self, *cells):
            super().add_row(*(markup(c) for c in cells))

    t = Rows(title=markup(f"shapefuzz {s['config'].get('backend')} on {s['config'].get('device')} "
                          f"(seed {s['config'].get('seed')})"), show_header=False)
    t.add_row("elapsed", f"{s['elapsed']:.0f} s")
    t.add_row("cases", f"{s['cases']}  ({s['cases_per_second']:.3f}/s)")
    t.add_row("compile share", "-" if s["compile_share"] is None else f"{100 * s['compile_share']:.0f}%")
    if s.get("cache_hits") and s["cases"]:
        t.add_row("cache hits", f"{s['cache_hits']} cases ({100 * s['cache_hits'] / s['cases']:.0f}%) reused "
                                "a compiled executable")
    t.add_row("outcomes", _fmt_counts(s["outcomes"]))
    if s.get("rejected_by_rule"):  # not findings: the maintainers' rules call them by design
        t.add_row("rejected, by rule", _fmt_counts(s["rejected_by_rule"]))
    t.add_row("findings new", _fmt_counts(s["findings_new"]))
    t.add_row("findings known", _fmt_counts(s["findings_known"]))
    if s.get("known_by_rule"):
        t.add_row("known, by rule", "\n".join(f"{n}  {rule}" for rule, n in sorted(s["known_by_rule"].items(),
                                                                                 key=lambda kv: -kv[1])))
    t.add_row("distinct bugs", f"{s.get('bugs', '-')}  (corpus entries, after merging)")
    t.add_row("raw signatures", f"{s['signatures']}  (as found, before shrinking)")
    if s.get("compiler_lines"):
        t.add_row("compiler lines", f"{s['compiler_lines']}  (reached in torch's compiler, --coverage)")
    if s.get("lineage"):  # --guided: how often a mutant reaches new lines, against a fresh program
        g = s["lineage"]
        t.add_row("mutants", f"{g.get('mutants', 0)} cases, {g.get('mutants_reaching_new', 0)} reached new lines "
                             f"(fresh: {g.get('fresh', 0)}, {g.get('fresh_reaching_new', 0)})")
    f = s.get("followups") or {}
    if f:
        line = f"{f.get('pending', 0)} pending, {f.get('done', 0)} done, {f.get('skipped', 0)} skipped, " \
               f"{f.get('failed', 0)} failed"
        if f.get("pending"):
            line += f"\nfinish them: {followup_command(s)} (or rerun the same command)"
        t.add_row("follow-ups", line)
    t.add_row("worker restarts", _fmt_counts({k: v for k, v in s["restarts"].items() if v}))
    if s.get("disk"):
        from fuzz.files import human_bytes

        d = s["disk"]
        t.add_row("disk", f"state dir {human_bytes(d['state_dir_bytes'])} (worker compile caches "
                          f"{human_bytes(d['worker_caches_bytes'])}); {human_bytes(d['free_bytes'])} free there"
                          + (f"; Inductor's precompiled header, kept for this machine: "
                             f"{human_bytes(d['kept_header_bytes'])}" if d.get("kept_header_bytes") else ""))
    if s.get("nodes"):
        t.add_row("ray nodes", nodes_text(s["nodes"]))
    return t


def nodes_text(nodes: dict, sep: str = "\n") -> str:
    """--ray: each node's cases and cases/s this session, and the total."""
    rows = [f"{name}: {n['cases']} cases, {n['cases_per_second']:.3f}/s, {n['workers']} workers"
            + (" (lost)" if n.get("state") == "lost" else "") for name, n in sorted(nodes.items())]
    total = sum(n["cases_per_second"] for n in nodes.values() if n.get("state") != "lost")
    return sep.join(rows + [f"{len(nodes)} nodes, {sum(n['cases'] for n in nodes.values())} cases, "
                            f"{total:.3f}/s summed over the nodes not lost"])


def pending_line(s: dict) -> str:
    """'N follow-ups pending ...' and how to finish them, or ''."""
    n = (s.get("followups") or {}).get("pending", 0)
    if not n:
        return ""
    return (f"{n} follow-up{'s' * (n > 1)} pending (shrink and merge): finish them with "
            f"`{followup_command(s)}` or by rerunning the same command")


def followup_command(s: dict) -> str:
    """The command that finishes a summary's follow-ups: --corpus where the findings went elsewhere than
    STATE/corpus (a state dir goes on only with the corpus it saved into)."""
    from fuzz.campaign.state_files import default_corpus

    cmd = f"shapefuzz followup {s['state_dir']}"
    corpus = s.get("corpus_dir")
    if isinstance(corpus, str) and os.path.abspath(corpus) != os.path.abspath(default_corpus(s["state_dir"])):
        cmd += f" --corpus {corpus}"
    return cmd


def summary_line(summary: dict) -> str:
    line = (f"... {summary['cases']} cases, {summary['cases_per_second']:.3f}/s, "
            f"finding cases {sum(summary['findings_new'].values())} new-class / "
            f"{sum(summary['findings_known'].values())} known, bugs {summary.get('bugs', '-')} "
            f"(raw signatures {summary['signatures']}), follow-ups pending "
            f"{(summary.get('followups') or {}).get('pending', 0)}, "
            f"restarts {sum(summary['restarts'].values())}")
    if summary.get("nodes"):
        line += f"\n    ray nodes: {nodes_text(summary['nodes'], '; ')}"
    return line


class _Waiting:
    """The live view before the first case is done: the seconds so far (re-rendered at each refresh)."""

    def __init__(self, progress: "Progress"):
        self.progress = progress

    def __rich__(self) -> str:
        return f"{time.monotonic() - self.progress.started:.0f} s, no case done yet: {self.progress.waiting}"


class Progress:
    def __init__(self, live: bool | None = None, every: float = PLAIN_EVERY, file=None):
        self.file = file or sys.stdout  # run --json: stderr, the summary alone on stdout
        self.live = self.file.isatty() if live is None else live
        self.every = every
        self.waiting = WAITING  # the campaign may say better
        self.started = time.monotonic()
        self._live = None
        self._last = time.monotonic()
        self._line = None  # the last plain line: repeated while nothing finishes
        self._updated = None  # when the last case finished
        self._print_lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = None

    def __enter__(self):
        self.started = self._last = time.monotonic()
        if self.live:
            from rich.console import Console
            from rich.live import Live

            from fuzz.terminal import raw

            self._live = Live(_Waiting(self), refresh_per_second=2, transient=False,
                              console=Console(file=raw(self.file)))
            self._live.__enter__()
        else:  # a line every `every` seconds even when no case finishes: silence reads as a hang
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick, name="shapefuzz-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._live is not None:
            self._live.__exit__(*exc)

    def _tick(self) -> None:
        while not self._stop.wait(min(1.0, self.every)):
            with self._print_lock:
                if time.monotonic() - self._last < self.every:
                    continue
                self._last = time.monotonic()
                if self._line is None:
                    self._print(f"... {self._last - self.started:.0f} s, no case done yet: {self.waiting}")
                else:
                    self._print(f"{self._line} (none finished in the last {self._last - self._updated:.0f} s)")

    def update(self, summary: dict) -> None:
        if self._live is not None:
            self._live.update(summary_table(summary))
            return
        with self._print_lock:
            first = self._line is None
            self._line, self._updated = summary_line(summary), time.monotonic()
            if first or time.monotonic() - self._last >= self.every:  # the first case at once: the start is over
                self._last = time.monotonic()
                self._print(self._line + (f" (first case done after {time.monotonic() - self.started:.0f} s)"
                                          if first else ""))

    def note(self, text: str) -> None:
        if self._live is not None:
            from fuzz.terminal import markup

            self._live.console.print(markup(text))
        else:
            with self._print_lock:
                self._print(text)

    def _print(self, text: str) -> None:
        print(text, file=self.file, flush=True)


def print_summary(summary: dict, as_json: bool = False) -> None:
    if as_json:
        import json

        print(json.dumps(summary, indent=1))
        return
    from rich.console import Console

    from fuzz.terminal import raw

    Console(width=110, file=raw(sys.stdout)).print(summary_table(summary))
