"""The measurements behind docs/benchmarks.md, one script each, run by name: `python -m benchmarks NAME`
(benchmarks/__main__.py; benchmarks/README.md lists them)."""
