"""The corpus on disk: one directory per distinct bug (corpus.py), the one loader of its JSON files
(corpus_files.py), what repro.py holds and the digests that tie a script or report to the program it was
made from (scripts.py), and repro.py rewritten and checked standalone (repro_files.py).
Imports fuzz.findings.signature and nothing else of fuzz.findings."""
