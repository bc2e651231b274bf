"""The torch_xla kind: a lazy-tensor step sequence (fuzz/program/step_ir.py
StepProgram) with sync points, run on the XLA device and in eager on CPU
(fuzz/judge/steps.py). Its JSON has "blocks"."""

from __future__ import annotations

import importlib.util
import os

from fuzz.kinds.base import ProgramKind


class StepKind(ProgramKind):
    name = "steps"
    noun = "torch_xla step program"
    recycle_after = 5000  # a case takes milliseconds and a restart seconds (importing torch_xla)
    isolated_by_default = True  # graphs cached by earlier cases in a process can make a verdict
    triage = ("a torch_xla step-program entry; triage ablates torch.compile programs (backends, static shapes, "
              "Inductor flags) and has no torch_xla variants yet")
    shrink_options = frozenset({"fault"})

    def load(self, d: dict):
        from fuzz.program.step_ir import StepProgram

        return StepProgram.from_dict(d)

    def repro_source(self, p, title: str = "") -> str:
        from fuzz.program.step_codegen import step_repro_source

        return step_repro_source(p, title)

    def judge(self, p):
        from fuzz.judge.steps import run_step_program

        return run_step_program(p)

    def judge_isolated(self, p, timeout: float):
        from fuzz.judge.steps import run_step_program

        return run_step_program(p, fresh=True, timeout=timeout)

    def runs_on(self, p) -> tuple[str, str]:
        return "xla", "cpu"  # the PJRT device PJRT_DEVICE names

    def retarget(self, p, backend: str | None = None, device: str | None = None):
        if backend or device:
            raise ValueError("a torch_xla step program runs on the PJRT device PJRT_DEVICE names; "
                             "--backend and --device do not apply to it")
        return p

    def unavailable(self, p, retarget: bool = True) -> str | None:
        if importlib.util.find_spec("torch_xla") is None:
            return ("a torch_xla entry: replay it with the torch_xla venv "
                    "(.venv-xla/bin/python -m fuzz replay, docs/xla.md)")
        return None

    def describe_run(self, p, v) -> str:
        label = self.known_issue(v)
        return (f"  torch_xla step program: {sum(len(b.steps) for b in p.blocks)} steps, "
                f"compiles={v.numbers.get('compiles')} seconds={v.seconds:.2f}" + (f"; known: {label}" if label else ""))

    def worker_env(self) -> dict | None:
        return {"PJRT_DEVICE": os.environ.get("PJRT_DEVICE", "CPU")}

    def prepare_worker(self) -> None:
        from fuzz.campaign.step_worker import prepare

        prepare()

    def evaluate(self, d: dict, **options):
        from fuzz.campaign.step_worker import evaluate

        return evaluate(d)

    def strategy(self, cfg):
        from strategies.steps import step_programs

        return step_programs()



    def known_issue(self, v) -> str | None:
        from fuzz.judge.steps import known_issue

        return known_issue(v)

    def op_label(self, name: str) -> str:
        from fuzz.program.step_ir import OPS

        return (OPS[name].label or name) if name in OPS else name

    def render_report(self, entry) -> str:
        from fuzz.findings.report.xla import render_steps

        return render_steps(entry)

    def shrink_entry(self, entry_dir, *, time_budget, reruns, write, fault=None, **_):
        from fuzz.findings.shrink.steps import shrink_step_entry

        return shrink_step_entry(entry_dir, time_budget=time_budget, reruns=reruns, write=write,
                                 evaluate=_planted(fault))

    def size(self, p) -> tuple:
        from fuzz.findings.shrink.steps import STEPS

        return STEPS.cost(p)

    def shrink_case(self, p, *, time_budget, timeout, fault=None, **_):
        from fuzz.findings.shrink.steps import fresh_evaluator, shrink_steps

        return shrink_steps(p, _planted(fault) or fresh_evaluator(timeout), time_budget=time_budget)


def _planted(fault):
    """For testing: every candidate judged in this process with a planted torch_xla fault."""
    if not fault:
        return None
    from fuzz.judge.steps import run_step_program

    return lambda q: run_step_program(q, fault=fault)
