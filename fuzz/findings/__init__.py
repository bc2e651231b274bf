"""What becomes of a finding once the judge has called it one, in layers; a layer imports only the ones
above it in this list (scripts/arch_metrics.py LAYERS, held by tests/test_architecture.py; function-level
imports count):

    signature.py      the bucket of a finding: which findings are one bug
    store/            the corpus on disk: entries, their JSON files, repro.py and the digests that tie
                      a script or report to its program
    status/           what is known of a bug: known-issue rules and their regexes, root-cause triggers,
                      clusters, torch release ranges, the upstream search
    sanitizer.py, steadying.py
                      a memory error re-run under compute-sanitizer; load-dependent findings steadied
    shrink/, triage.py, deferred_triage.py
                      the shrink engine and its kinds; the ablation of a shrunk finding, and its deferral
                      until a report is asked for
    replay.py, standalone.py
                      a corpus replayed against the installed torch; a finding checked in a fresh process
    report/           what a person reads: issue reports and their titles, BUGS.md, the xfail tests,
                      traces; every field from data reaches Markdown through report/markdown.py
    dedupe.py, reference.py
                      one bug, one entry (shrink, re-key, merge), and causes a reference corpus already
                      holds counted under its rows (it reads that corpus's bug list)

Every layer may use the campaign's process pool and the state dir's files (fuzz.campaign.workers, sizing,
cold_start, lifeline, disk, errors, state_files) and nothing else of fuzz.campaign.
"""
