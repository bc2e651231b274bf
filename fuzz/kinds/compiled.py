"""The torch.compile kind: one function (fuzz/program/ir.py Program)
compiled once and called over a size schedule, judged against eager and a
float64 eager reference (fuzz/judge/runner.py)."""

from __future__ import annotations

import json
import os
import tempfile

from fuzz.kinds.base import ProgramKind


class CompiledKind(ProgramKind):
    name = "compiled"
    noun = "torch.compile program"
    recycle_after = 200  # compiled code and Inductor's caches grow with every case

    def load(self, d: dict):
        from fuzz.program.ir import Program
        from fuzz.program.typecheck import typecheck  # lazy: pulls in the op database

        p = Program.from_dict(d)
        typecheck(p)
        return p

    def similar_key(self, d: dict) -> str | None:
        # Hypothesis's mutator draws a new program again with other dims marked:
        # the same kernels to compile (a ptxas that never ends, say) at the same sizes
        try:
            inputs = [{k: v for k, v in x.items() if k not in ("marks", "mark_range", "mark_negative")}
                      for x in d["inputs"]]
            return json.dumps({**d, "inputs": inputs}, sort_keys=True)
        except (KeyError, TypeError, AttributeError):
            return None

    def repro_source(self, p, title: str = "") -> str:
        from fuzz.program.codegen import repro_source

        return repro_source(p, title)

    def judge(self, p):
        from fuzz.judge.runner import run_case

        return run_case(p)

    def judge_isolated(self, p, timeout: float):
        from fuzz.judge.isolated import judge_in_subprocess

        with tempfile.TemporaryDirectory(prefix="shapefuzz-judge-") as d:
            path = os.path.join(d, "program.json")
            with open(path, "w") as f:
                json.dump(p.to_dict(), f)
            return judge_in_subprocess(path, timeout=timeout)

    def runs_on(self, p) -> tuple[str, str]:
        return p.settings.backend, p.settings.device

    def retarget(self, p, backend: str | None = None, device: str | None = None):
        if backend:
            p.settings.backend = backend
        if device:
            p.settings.device = device
        return p

    def unavailable(self, p, retarget: bool = True) -> str | None:
        from fuzz import devices

        why = devices.missing(p.settings.device)
        if why:
            return (f"a program for {p.settings.device}, and {why} "
                    f"(run it on a GPU machine{', or re-target it with --device cpu' if retarget else ''})")
        return None

    def describe_run(self, p, v) -> str:
        text = (f"  backend={p.settings.backend} device={p.settings.device} calls={p.calls} "
                f"recompiles={v.recompiles} seconds={v.seconds:.2f}")
        return text + (f"\n  by design ({v.rule}); not a bug" if v.rule else "")

    def prepare_worker(self) -> None:
        from fuzz.judge.runner import prepare_process

        prepare_process()

    def evaluate(self, d: dict, rerun: bool = True, check_strides: bool = True, confirmed=()):
        from fuzz.judge.runner import evaluate_dict

        return evaluate_dict(d, rerun=rerun, check_strides=check_strides, confirmed=confirmed)

    def strategy(self, cfg):
        from strategies import programs
        from strategies.settings import BACKWARD_EVERY

        from fuzz.devices import device_type
        from fuzz.program.opspec import FAMILIES

        kw = dict(backend=cfg.backend, device=cfg.device, max_ops=cfg.max_ops,
                  modes=cfg.resolved_modes(), options_menu=cfg.resolved_options(),
                  families=cfg.families or FAMILIES, ops=cfg.ops,
                  backward_every=BACKWARD_EVERY.get(device_type(cfg.device), 4))
        if getattr(cfg, "swarm", False):
            from strategies.swarm import SwarmPrograms

            return SwarmPrograms(**kw)
        if getattr(cfg, "pair_aimed", False):
            from strategies.aim import PairPrograms

            return PairPrograms(**kw)
        return programs(**kw)

    def mutation_menu(self, cfg):
        from strategies.mutate import Menu

        from fuzz.program.opspec import FAMILIES

        return Menu(device=cfg.device, families=cfg.families or FAMILIES, ops=cfg.ops, max_ops=cfg.max_ops)



    def op_label(self, name: str) -> str:
        from fuzz.program.opdb import OPS

        return OPS[name].label() if name in OPS else name

    def render_report(self, entry) -> str:
        from fuzz.judge.backends import backend

        if backend(entry.program.settings.backend).component == "torch_xla":  # PyTorch/XLA's issue layout
            from fuzz.findings.report.xla import render_openxla

            return render_openxla(entry)
        from fuzz.findings.report.issue import render_compiled

        return render_compiled(entry)

    shrink_options = frozenset({"backend", "device", "sandbox", "relax_families", "hypothesis"})

    def shrink_entry(self, entry_dir, *, time_budget, reruns, write, timeout, log=None, backend=None, device=None,
                     sandbox=None, relax_families=True, hypothesis=0, onto=None, **_):
        from fuzz.findings.shrink.entry import shrink_entry

        return shrink_entry(entry_dir, time_budget=time_budget, reruns=reruns, backend=backend, device=device,
                            sandbox=sandbox, timeout=timeout, relax_families=relax_families,
                            hypothesis_examples=hypothesis, write=write, onto=onto, log=log)

    def size(self, p) -> tuple:
        from fuzz.findings.shrink.compiled import cost

        return cost(p)

    def shrink_case(self, p, *, time_budget, reruns, timeout, log=None, sandbox=None, relax_families=True,
                    hypothesis=0, **_):
        """Judge p, pin its signature, shrink; ValueError when p is not a finding."""
        from fuzz.findings.shrink.entry import evaluate_in_process, pool_evaluator, shrink
        from fuzz.findings.signature import signature

        pool = None
        if sandbox:
            from fuzz.campaign.workers import WorkerPool

            pool = WorkerPool(workers=1, timeout=timeout, rerun=False)
        evaluate = pool_evaluator(pool) if pool else None
        try:
            v = (evaluate or evaluate_in_process)(p)
            if not v.is_finding:
                raise ValueError(f"{v.summary()}: not a finding, nothing to shrink")
            return shrink(p, signature(v, p).key, evaluate=evaluate, time_budget=time_budget, reruns=reruns,
                          relax_families=relax_families, hypothesis_examples=hypothesis, log=log)
        finally:
            if pool is not None:
                pool.close()

