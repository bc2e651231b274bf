"""A campaign's follow-up work on new entries, kept as state that survives kill -9: the job log and its
runner (runner.py), the supervisor that keeps a runner on them (supervisor.py), several jobs at once on this
machine (local.py), which job runs when (schedule.py) and the wind-down that leaves little unshrunk when a
campaign ends (winddown.py).
Imports fuzz.findings, the campaign's process pool and state files, and fuzz.campaign.cluster (a job run
on a Ray node); nothing else of fuzz.campaign."""
