"""`shapefuzz run`: a resumable fuzz campaign."""

from __future__ import annotations

import os
import sys

from fuzz.campaign.draws import DRAWS
from fuzz.cli.common import (EXIT_BAD_INPUT, EXIT_BUG, EXIT_OK, count, device_arg, error, missing_device,
                             parse_duration, parse_size, unknown_backend)

DEFAULT_MAX_CASES = 20  # when neither --max-cases nor --time is given


def add_parser(subparsers):
    r = subparsers.add_parser("run", help="a fuzz campaign: generate, judge in sandboxed workers, save findings",
                              description="Resumable: run the same command again after a crash or Ctrl-C.")
    r.add_argument("--backend", default="inductor", help="a torch.compile backend (inductor, aot_eager, openxla, "
                   "...), or xla: torch_xla step programs (in-place ops, views, syncs; needs torch_xla, docs/xla.md)")
    r.add_argument("--device", type=device_arg, default="cpu", help="cpu (default) or cuda (every GPU; see --gpus)")
    r.add_argument("--seed", type=count(0), default=0, help="the seed every program is drawn from (default 0); "
                   "the same seed draws the same programs")
    r.add_argument("--max-cases", type=count(1), default=None, help="stop after this many cases (default: 20 "
                   "unless --time is given)")
    r.add_argument("--time", type=parse_duration, default=None, help="stop after this long, e.g. 30m, 8h")
    r.add_argument("--max-findings", type=count(1), default=None,
                   help="stop once this many findings (new or known) are logged, e.g. 1 in CI")
    r.add_argument("--max-ops", type=count(1), default=6, help="ops per program at most (default 6)")
    r.add_argument("--families", nargs="+", default=None, metavar="FAMILY",
                   help="draw ops of these families only, e.g. matrix nn (default: all; `shapefuzz ops` lists them)")
    r.add_argument("--ops", nargs="+", default=None, metavar="OP",
                   help="draw these ops only, e.g. mm addmm (default: all; `shapefuzz ops` lists them)")
    r.add_argument("--draw", choices=DRAWS, default=None,
                   help="how torch.compile programs are drawn. pair-aimed (the default): each program is made to "
                   "hold three pairs (a value's layout, alias, mark, dtype class or producer, or a setting, x the op "
                   "that reads it) taken in turn from every such pair, so rare conjunctions are drawn; it found the "
                   "most bugs per GPU-hour (docs/benchmarks.md). blind: each op and feature on its own (cheaper "
                   "programs, fewer conjunctions). swarm: each batch of 100 from a random part of the menu. A state "
                   "dir run again keeps the draw it began with (docs/generator.md)")
    r.add_argument("--swarm", action="store_true", help="the same as --draw swarm")
    r.add_argument("--pair-aimed", action="store_true", help="the same as --draw pair-aimed")
    r.add_argument("--coverage", action="store_true",
                   help="measure which lines of torch's compiler each case reaches (Python 3.12+; `stats` shows the "
                   "total, cases.jsonl each case's new lines; docs/generator.md)")
    r.add_argument("--guided", action="store_true",
                   help="coverage guidance: every other case is a mutant (an op swapped, inserted or dropped; a mark, "
                   "dtype, layout or param changed) of a program that reached compiler lines no earlier case had. "
                   "Implies --coverage (Python 3.12+); docs/generator.md")
    r.add_argument("--modes", nargs="+", default=None, type=_mode,
                   help="torch.compile modes to sample, e.g. default max-autotune reduce-overhead "
                   "(default: all four on CUDA, default on CPU)")
    r.add_argument("--options-menu", choices=["auto", "cuda", "cpu", "none"], default="auto",
                   help="Inductor flags to sample (strategies/settings.py; auto: by device, none on CPU)")
    r.add_argument("--workers", type=count(0), default=None,
                   help="sandboxed workers (default: one per usable CPU, spread over the GPUs on CUDA); "
                   "0 judges in this process")
    r.add_argument("--workers-per-gpu", type=count(1), default=None,
                   help="CUDA: this many workers per GPU instead of one per CPU")
    r.add_argument("--gpus", type=_gpus, default=None, help="CUDA device indices, e.g. 0,1 (default: all)")
    r.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="judge on a Ray cluster: HOST:PORT of its head, local (a Ray in this process), or nothing "
                   "(RAY_ADDRESS, or the cluster `ray start` made here); --workers is then per node (default: the "
                   "node's Ray CPUs). Needs the ray extra; docs/cluster.md")
    r.add_argument("--timeout", type=parse_duration, default=None, help="per case (default 300s; 120s on CUDA; "
                   "never more than --time)")
    r.add_argument("--state", default=None, help="state dir (default runs/BACKEND-DEVICE-seedS)")
    r.add_argument("--corpus", default=None, help="corpus dir for new findings (default STATE/corpus, beside the "
                   "state dir; the repository's corpus/ only when named)")
    r.add_argument("--known-issues", default=None, help="known upstream issues (default: CORPUS/known_issues.json, "
                   "else the reference corpus's; never a file of the directory the command runs in)")
    r.add_argument("--known-corpus", default=None, metavar="DIR",
                   help="a corpus whose causes are counted under its rows (status, upstream link) instead of "
                   "written as new entries (default: the corpus of the checkout shapefuzz runs from, where there "
                   "is one; 'none': no reference); read only")
    r.add_argument("--no-shrink", dest="shrink", action="store_false",
                   help="do not shrink new corpus entries in the background")
    r.add_argument("--triage", dest="triage", action="store_true", default=False,
                   help="also ablate each new corpus entry (backends, static shapes, devices, options) beside the "
                   "campaign; by default the triage waits until `shapefuzz report ENTRY` (or `bugs --triage`) asks")
    r.add_argument("--no-triage", dest="triage", action="store_false",
                   help="no triage beside the campaign (the default)")
    r.add_argument("--no-sanitize", dest="sanitize", action="store_false",
                   help="CUDA: do not re-run memory-error findings under compute-sanitizer")
    r.add_argument("--shrink-budget", type=parse_duration, default=300.0, help="per new entry (default 300s)")
    r.add_argument("--cache-limit", type=parse_size, default=None, metavar="SIZE",
                   help="bound the compile caches of workers and follow-ups, e.g. 20MB, 10GB (default: 40%% of "
                   "the free space of the state dir's disk); a worker over its share is replaced, its caches emptied")
    r.add_argument("--no-wait", dest="wait", action="store_false",
                   help="exit once the cases are done, leaving follow-ups (shrink and merge) pending for "
                   "`shapefuzz followup STATE` or a rerun; the exit code then counts the bugs as they stand "
                   "before their follow-ups (an entry a follow-up would set aside as unconfirmed still counts)")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(fn=cmd)
    return r


def case_timeout(given: float | None, device: str, time_limit: float | None = None) -> float:
    """--timeout, else the device type's default (fuzz/campaign/driver.py CASE_TIMEOUT); never more than the
    campaign's time limit (one hung case would otherwise hold a worker past it)."""
    from fuzz.campaign.driver import CASE_TIMEOUT, CampaignConfig
    from fuzz.devices import device_type

    timeout = given if given is not None else CASE_TIMEOUT.get(device_type(device), CampaignConfig.timeout)
    return timeout if time_limit is None else min(timeout, time_limit)


def _start_lines(cfg, args, sizing, draw: str, said) -> None:
    """What the campaign runs, where it writes, what it counts as known, and its resources; StateError where
    its reference corpus or rules cannot be had."""
    from fuzz.campaign.disk import default_cache_limit, limit_line

    limit = f"max_cases={cfg.max_cases}" if cfg.max_cases else ""
    limit += f" time={cfg.time_limit:.0f}s" if cfg.time_limit else ""
    drawn = f" draw={draw}" if cfg.kind().name == "compiled" else ""
    print(f"shapefuzz run: backend={cfg.backend} device={cfg.device} seed={cfg.seed}{drawn} {limit.strip()} "
          f"timeout={cfg.timeout:g}s per case{' (the time limit)' if cfg.timeout == cfg.time_limit else ''} "
          f"state={cfg.state_dir} corpus={cfg.corpus_dir}", file=said, flush=True)
    print(f"shapefuzz run: {_reference_line(cfg)}", file=said, flush=True)
    print(f"shapefuzz run: {sizing.line() if sizing else _ray_line(args)}; "
          f"{limit_line(cfg.cache_limit or default_cache_limit(cfg.state_dir), bool(cfg.cache_limit), cfg.state_dir)}",
          file=said, flush=True)


def _reference_line(cfg) -> str:
    """The start line's part that names the reference corpus and the known-issues rules."""
    from fuzz.campaign.driver import reference_corpus, rules_path

    ref, rules = reference_corpus(cfg), rules_path(cfg)
    text = (f"reference corpus {ref} (findings of its causes are counted under its rows; --known-corpus to name "
            "another, none for no reference)") if ref else "no reference corpus (--known-corpus DIR to name one)"
    return text + f"; known-issues rules {rules or 'none'}"


def cmd(args) -> int:
    from fuzz.campaign.draws import draw_flags
    from fuzz.campaign.driver import CampaignConfig, run_campaign
    from fuzz.campaign.progress import Progress, pending_line, print_summary
    from fuzz.campaign.sizing import size_pool
    from fuzz.campaign.state import StateError

    if args.max_cases is None and args.time is None:
        args.max_cases = DEFAULT_MAX_CASES
    if unknown_backend(args.backend, args.device):
        return EXIT_BAD_INPUT
    args.state = args.state or _default_state_dir(args)
    why = _bad_options(args) or _other_corpus(args)
    if why:
        error(why)
        return EXIT_BAD_INPUT
    draw = resolved_draw(args)
    devices = _cuda_devices(args) if args.ray is None else None  # with --ray, each node's GPUs
    if isinstance(devices, str):
        error(devices)
        return EXIT_BAD_INPUT
    sizing = size_pool(args.workers, devices, args.workers_per_gpu) if args.ray is None else None
    cfg = CampaignConfig(backend=args.backend, device=args.device, seed=args.seed, max_cases=args.max_cases,
                         time_limit=args.time, max_findings=args.max_findings, max_ops=args.max_ops,
                         families=tuple(args.families) if args.families else None,
                         ops=tuple(args.ops) if args.ops else None, **draw_flags(draw),
                         coverage=args.coverage or args.guided, guided=args.guided,
                         modes=tuple(args.modes) if args.modes else None, options_menu=args.options_menu,
                         state_dir=args.state, corpus_dir=args.corpus,
                         workers=sizing.workers if sizing else args.workers, devices=devices,
                         workers_per_gpu=args.workers_per_gpu if args.ray is not None else args.workers_per_gpu or 1,
                         ray=args.ray,
                         timeout=case_timeout(args.timeout, args.device, args.time),
                         known_issues=args.known_issues, known_corpus=args.known_corpus, shrink=args.shrink,
                         triage=args.triage, sanitize=args.sanitize, shrink_budget=args.shrink_budget,
                         cache_limit=args.cache_limit)
    said = sys.stderr if args.json else sys.stdout  # --json: stdout is the summary alone
    try:
        _start_lines(cfg, args, sizing, draw, said)
    except StateError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    printed = []

    def cases_done(summary):  # the summary as soon as the cases are done; follow-ups may go on after it
        if not args.json:  # (JSON: once, at the end, for machines to read whole)
            printed.append(True)
            print_summary(summary)
        note = pending_line(summary)
        if note:
            print(note + ("; finishing them now (Ctrl-C is safe)" if args.wait else ""),
                  file=said, flush=True)

    try:
        res = run_campaign(cfg, on_cases_done=cases_done, wait=args.wait,
                           progress=Progress(file=said))
    except StateError as e:
        error(str(e))
        return EXIT_BAD_INPUT
    except Exception as e:  # noqa: BLE001 - only the cluster's own error is one line; anything else is a bug
        if type(e).__name__ != "RayError":
            raise
        error(str(e))
        return EXIT_BAD_INPUT
    if not printed:
        print_summary(res.summary, as_json=args.json)
    if not args.json:
        _after(res, pending_line)
    if res.interrupted:
        print("interrupted; run the same command again to resume" + (
            f" (follow-ups too, or: shapefuzz followup {cfg.state_dir})" if res.followups.get("pending") else ""),
            file=sys.stderr)
        return 130
    return exit_code(res.summary)


def exit_code(summary: dict) -> int:
    """1 when distinct bugs stand once the follow-ups are done: corpus entries of this campaign's findings not
    known upstream, after merging, less those set aside as unconfirmed (no fail alone in a fresh process);
    else 0. With follow-ups left pending (--no-wait), the entries as they stand then: one that a later
    follow-up sets aside still counts."""
    return EXIT_BUG if summary.get("bugs") else EXIT_OK


def _mode(text: str):
    """A torch.compile mode for --modes ("default": no mode=)."""
    import argparse

    from strategies.settings import MODES_CUDA

    known = [m for m in MODES_CUDA if m]
    if text == "default":
        return None
    if text not in known:
        raise argparse.ArgumentTypeError(f"unknown mode {text!r}; use default or one of {', '.join(known)}")
    return text


def _gpus(text: str) -> list:
    """--gpus 0,1 -> [0, 1]."""
    import argparse

    items = [x.strip() for x in text.split(",")]
    if not items or not all(x.isdigit() for x in items) or len(set(items)) != len(items):
        raise argparse.ArgumentTypeError(f"not a list of distinct GPU indices: {text!r} (use e.g. 0,1)")
    return [int(x) for x in items]


def _bad_options(args) -> str | None:
    """Why the options cannot run here, checked before anything is written; None when they can."""
    from fuzz.devices import is_cuda, parse

    if args.ray is not None:
        why = _bad_ray(args)
        if why:
            return why
    if is_cuda(args.device) and parse(args.device).index is not None:
        return (f"--device {args.device}: workers are pinned to GPUs by index; use --device cuda "
                f"--gpus {parse(args.device).index}")
    if not is_cuda(args.device) and (args.gpus is not None or args.workers_per_gpu is not None):
        return (f"--{'gpus' if args.gpus is not None else 'workers-per-gpu'} applies to --device cuda only "
                "(on CPU, --workers N sets the workers)")
    why = _bad_menu(args) or _bad_coverage(args)
    return why or (missing_device(args.device) if args.ray is None else None)  # --ray: the nodes' GPUs


def _bad_ray(args) -> str | None:
    """--ray: Ray installed, an address, and options that mean something on a cluster."""
    from fuzz.campaign.cluster.pool import bad_address, missing

    if args.workers == 0:
        return "--workers 0 judges in this process; with --ray, --workers N sets the workers of each node (N >= 1)"
    if args.gpus is not None:
        return ("--gpus picks GPUs of this machine; with --ray each node uses the GPUs its `ray start --num-gpus` "
                "gives Ray")
    return bad_address(args.ray) or missing()


def _ray_line(args) -> str:
    from fuzz.devices import is_cuda

    per_node = f"--workers {args.workers} per node" if args.workers else (
        f"{args.workers_per_gpu} per GPU of each node" if args.workers_per_gpu else
        "per node: one per Ray CPU" + (" shared over its GPUs" if is_cuda(args.device) else ""))
    return f"ray={args.ray} (workers {per_node}; driver: generation, state and corpus here)"


def _bad_coverage(args) -> str | None:
    """--coverage and --guided: a Python that can measure, sandboxed workers of this machine that report it,
    and (--guided) programs that have edits."""
    if not (args.coverage or args.guided):
        return None
    from fuzz.judge.coverage import available

    flag = "--guided" if args.guided else "--coverage"
    if (why := available()):
        return why.replace("--coverage", flag)
    if args.workers == 0 or args.ray is not None:
        return f"{flag} is measured in this machine's workers: not with --workers 0 or --ray"
    if args.guided:
        from fuzz.judge.backends import backend

        if backend(args.backend).kind != "compiled":
            return f"--guided edits torch.compile programs (the {args.backend} backend draws its own step programs)"
    return None


def _draws_given(args) -> list:
    """The draws the command line names, as (flag, draw)."""
    given = [(f"--draw {args.draw}", args.draw)] if args.draw else []
    return given + [(flag, draw) for flag, draw, on in (("--swarm", "swarm", args.swarm),
                                                        ("--pair-aimed", "pair-aimed", args.pair_aimed)) if on]


def resolved_draw(args) -> str:
    """The draw: the one given; else the one the state dir's campaign began with (so running a command again
    resumes it, whatever the default was then); else pair-aimed for torch.compile programs, blind for the
    step programs of other backends (they have one way to draw)."""
    from fuzz.campaign.draws import draw_of
    from fuzz.campaign.state import CampaignState
    from fuzz.judge.backends import backend

    given = _draws_given(args)
    if given:
        return given[0][1]
    stored = CampaignState.stored_config(args.state) if args.state else None
    if stored is not None:
        return draw_of(stored)
    return "pair-aimed" if backend(args.backend).kind == "compiled" else "blind"


def _bad_menu(args) -> str | None:
    """--families / --ops / --draw: known names, one draw, and only for torch.compile programs."""
    given = _draws_given(args)
    if len({d for _, d in given}) > 1:
        return f"{' and '.join(f for f, _ in given)} are two ways to draw: give one of them"
    drawn = [(f, d) for f, d in given if d != "blind"]  # blind is how every backend draws
    if not (args.families or args.ops or drawn):
        return None
    from fuzz.judge.backends import backend
    from fuzz.program.opdb import OPS
    from fuzz.program.opspec import FAMILIES

    flag = "--families" if args.families else "--ops" if args.ops else drawn[0][0]
    if args.ops and any(d == "swarm" for _, d in given):
        return "--swarm and --ops: --ops names the menu itself; give --swarm alone, or with --families"
    if backend(args.backend).kind != "compiled":
        return f"{flag} applies to torch.compile backends (the {args.backend} backend draws its own step programs)"
    bad = sorted(set(args.families or ()) - set(FAMILIES))
    if bad:
        return f"--families: no family {', '.join(bad)}; the families are {', '.join(FAMILIES)}"
    bad = sorted(set(args.ops or ()) - {o.name for o in OPS})
    if bad:
        return f"--ops: no op {', '.join(bad)}; `shapefuzz ops` lists them"
    if args.families and args.ops and not any(OPS[o].family in args.families for o in args.ops):
        return "--ops and --families share no op: nothing to draw"
    from fuzz.devices import device_type

    here = device_type(args.device)
    if args.ops and not any(OPS[o].runs_on(here) for o in args.ops):
        return (f"--ops: {', '.join(args.ops)} {'has' if len(args.ops) == 1 else 'have'} no eager kernel on "
                f"{here} (`shapefuzz ops` lists each op); nothing to draw")
    return None


def _after(res, pending_line) -> None:
    """The corpus entries the session made, where they are now (merged ones moved), and the follow-ups."""
    from fuzz.findings.store.corpus import Corpus

    if res.new_entries:
        lines = []
        for e in res.new_entries:
            now = Corpus(os.path.dirname(e)).resolve(os.path.basename(e))
            lines.append(e if now is None or str(now) == e else f"{e} -> {now}")
        print("new corpus entries:\n  " + "\n  ".join(lines))
    f = res.followups
    if f:
        print(f"follow-ups: {f.get('done', 0)} done, {f.get('skipped', 0)} skipped, {f.get('failed', 0)} failed, "
              f"{f.get('pending', 0)} pending; distinct bugs {res.summary.get('bugs')} "
              f"(raw signatures {res.summary.get('signatures')})")
        if f.get("pending"):
            print(pending_line(res.summary))


def _other_corpus(args) -> str | None:
    """A state dir resumed without --corpus whose findings went elsewhere (its start predates STATE/corpus as
    the default, or named another --corpus): why it cannot resume so, and the flag that would. The path is
    read from the state dir only to be named, never written to."""
    from fuzz.campaign.state_files import other_corpus

    return None if args.corpus is not None else other_corpus(args.state, None)


def _default_state_dir(args) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in args.backend)
    return os.path.join("runs", f"{safe}-{args.device.replace(':', '')}-seed{args.seed}")


def _cuda_devices(args):
    """The CUDA indices to spread workers over (None on CPU), or why they cannot be used."""
    from fuzz.devices import is_cuda

    if not is_cuda(args.device):
        return None
    import torch

    n = torch.cuda.device_count()
    wanted = args.gpus if args.gpus is not None else list(range(n))
    bad = [g for g in wanted if g >= n]
    if bad:
        return f"--gpus {','.join(map(str, wanted))}: this machine has {n} CUDA device{'s' * (n != 1)} (0..{n - 1})"
    return wanted
