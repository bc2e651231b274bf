"""Follow-ups keep pace (fuzz/campaign/followup_local.py): beside a campaign's
cases the jobs' share of the CPUs grows with the queue; once the cases end,
or in a drain, every slot runs a job."""

from fuzz.campaign.followup_local import PENDING_PER_SLOT, LocalRemote


def test_beside_the_cases_the_followups_share_grows_with_the_queue_up_to_a_quarter():
    r = LocalRemote(16, beside_cases=True)
    assert [r.slots(n, draining=False) for n in (0, 1, PENDING_PER_SLOT, PENDING_PER_SLOT + 1)] == [1, 1, 1, 2]
    assert r.slots(3 * PENDING_PER_SLOT, draining=False) == 3
    assert r.slots(1000, draining=False) == 4  # the workers keep three quarters of the CPUs
    assert r.slots(1000, draining=True) == 16  # the cases are done: all of them


def test_a_drain_uses_every_slot_at_once():
    assert LocalRemote(16).slots(1, draining=False) == 16
    assert LocalRemote(2, beside_cases=True).slots(50, draining=False) == 1
