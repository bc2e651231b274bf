"""One campaign over a Ray cluster (`shapefuzz run --ray`): the pool of remote judges (pool.py), one
node's workers (node.py) and follow-up jobs run on the nodes (followups.py).
Imports fuzz.findings and the campaign's process pool; nothing else of fuzz.campaign."""
