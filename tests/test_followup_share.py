"""Follow-ups keep pace (fuzz/campaign/followup_local.py): beside a campaign's
cases the jobs' share of the CPUs grows with the queue; once the cases end,
or in a drain, every slot runs a job."""

from fuzz.campaign.followup_local import PENDING_PER_SLOT, LocalRemote, workers_to_pause


def test_beside_the_cases_the_followups_share_grows_with_the_queue_up_to_half():
    r = LocalRemote(16, beside_cases=True)
    assert [r.slots(n, draining=False) for n in (0, 1, PENDING_PER_SLOT, PENDING_PER_SLOT + 1)] == [1, 1, 1, 2]
    assert r.slots(3 * PENDING_PER_SLOT, draining=False) == 3
    assert r.slots(1000, draining=False) == 8  # the workers keep half the CPUs
    assert r.slots(1000, draining=True) == 16  # the cases are done: all of them


def test_a_drain_uses_every_slot_at_once():
    assert LocalRemote(16).slots(1, draining=False) == 16
    assert LocalRemote(2, beside_cases=True).slots(50, draining=False) == 1


def test_workers_pause_for_the_followups_only_where_the_cpus_are_short():
    # one worker per CPU (the default): the follow-ups' share and their runner come out of the workers
    assert workers_to_pause(16, 16, 0) == 0
    assert workers_to_pause(16, 16, 1) == 2  # one job and its runner
    assert workers_to_pause(16, 16, 6) == 4
    assert workers_to_pause(16, 16, 1000) == 8  # at most half
    # CPUs to spare (16 workers on a 64-CPU box): no worker pauses
    assert workers_to_pause(16, 64, 1000) == 0
    # under 8 CPUs the follow-ups run one at a time in their runner, beside every worker
    assert workers_to_pause(2, 2, 50) == 0
