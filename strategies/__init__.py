"""Hypothesis strategies for dynamic-shape programs.

Every strategy here draws plain data (fuzz.program.ir), needs no torch to draw, and
builds values that are valid by construction for every call of the size
schedule. Each docstring says how it shrinks.
"""

from .markings import dynamic_markings
from .ops import pad_specs
from .programs import pointwise_chains, programs, views
from .shapes import shapes, size_schedules, tensor_inputs

__all__ = ["dynamic_markings", "pad_specs", "pointwise_chains", "programs", "shapes",
           "size_schedules", "tensor_inputs", "views"]
