"""The op database: every op shapefuzz can generate, declared once.

Adding an op is one entry in its family's module under fuzz/program/ops/
(usually one call of a family factory); the strategies, the validator, the
interpreter and the repro generator all read it. tests/test_opdb.py checks
that every entry is reachable by the strategies, runs in eager and renders
to Python.
"""

from fuzz.program.ops import MAX_RANK, OPS, PAD_MODES

__all__ = ["OPS", "MAX_RANK", "PAD_MODES"]
