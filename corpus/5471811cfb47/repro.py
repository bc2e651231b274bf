"""shapefuzz 5471811cfb47: compiled-only-error | AcceleratorError | CUDA error: an illegal memory access was encountered | -

No short repro: the short form did not fail as the finding did: it passed (exit 0).

The full judging harness, a standalone script that imports only torch and exits 1 while
the bug stands, is generated from this entry's program.json (ENTRY: this directory):

    shapefuzz repro ENTRY --harness -o harness.py
"""
import sys

print(__doc__, file=sys.stderr)
sys.exit(2)
