"""shapefuzz: property-based fuzzing of dynamic shapes in PyTorch's compilers."""

__version__ = "0.1.0"
