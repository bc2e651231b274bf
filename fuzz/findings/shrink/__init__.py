"""Shrinking a finding with its signature pinned: the engine, one loop for every kind of program
(engine.py), its kinds (compiled.py: torch.compile programs, built from program_edits.py; steps.py:
torch_xla step programs), a corpus entry shrunk (entry.py) and the shortcut onto a known minimal form
(onto.py). Imports fuzz.findings.store, status, signature, sanitizer and steadying, and the campaign's
process pool."""
