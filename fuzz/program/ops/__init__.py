"""The op database as a package: one module per op family, each adding its
entries to the one registry (common.OPS). Import order is registration
order, which is the order the strategies offer ops within a family."""

from fuzz.program.ops import pointwise, pads, views, reductions, cat, inplace  # noqa: F401,E401 - registers
from fuzz.program.ops import matrix, nn, scans, indexing, shape_ops, resample, data_dependent  # noqa: F401,E401
from fuzz.program.ops import contract  # noqa: F401 - registers eager_rejects, which no menu offers
from fuzz.program.ops import lists, forms  # noqa: F401,E401 - registers
from fuzz.program.ops.common import MAX_RANK, OPS
from fuzz.program.ops.pads import PAD_MODES

__all__ = ["OPS", "MAX_RANK", "PAD_MODES"]
