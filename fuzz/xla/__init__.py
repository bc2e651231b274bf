"""The torch_xla backend: step programs (lazy-tensor sequences with sync
points) run on the XLA device and in eager on CPU, observation by observation.

- steps.py    the step-program IR (plain data, JSON, no torch)
- codegen.py  StepProgram -> Python source (the interpreter runs that text)
              and a standalone repro.py
- backend.py  run_step_program(p) -> Verdict (imports torch_xla lazily)
- audit.py    the graph-hash audit and the known torch_xla bugs (known_issue)
- bench.py    python -m fuzz.xla.bench: cases/s, cache hits, findings
"""
