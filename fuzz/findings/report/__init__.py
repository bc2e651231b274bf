"""What a person reads: an entry's issue-ready report (issue.py, with its title, outcome and parts, the
collapsed ablation, the PyTorch/XLA layouts in xla.py and the TORCH_TRACE of trace.py), the bug list
BUGS.md (bugs.py) and the xfail tests upstream can take (export_tests.py). Every field from data reaches
Markdown through markdown.py, and scrubbing.py takes the tool's own names out of messages.
It may import every layer of fuzz.findings but dedupe.py and reference.py (which read its bug list)."""
