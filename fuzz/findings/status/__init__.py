"""What is known of a bug, kept as data beside the corpus: known-issue rules (known.py) on a bounded regex
engine (rule_regex.py), root-cause triggers (triggers.py), one cause one row (clusters.py), the reference
corpus a campaign counts known causes under (reference.py), the torch releases an entry affects
(versions.py) and the upstream search (upstream_search.py).
Imports fuzz.findings.store and fuzz.findings.signature of fuzz.findings."""
