"""The parts of --ray that need no cluster: how a node is sized from the
resources it gives Ray, and the per-node progress line."""

import pytest

from fuzz.campaign.progress import nodes_text
from fuzz.campaign.cluster.pool import RayPool, bad_address


def pool(**kw):
    p = object.__new__(RayPool)  # no cluster: only the sizing rule
    p.workers, p.workers_per_gpu, p.cuda = kw.get("workers"), kw.get("workers_per_gpu"), kw.get("cuda", False)
    return p


@pytest.mark.parametrize("kw,resources,expected", [
    ({}, {"CPU": 16.0}, (16, None)),  # one worker per Ray CPU
    ({}, {"CPU": 0.0}, (0, None)),  # a head kept for the driver judges nothing
    ({"workers": 3}, {"CPU": 16.0}, (3, None)),  # --workers: per node
    ({"workers": 3}, {"CPU": 0.0}, (0, None)),
    ({"cuda": True}, {"CPU": 16.0, "GPU": 8.0}, (16, list(range(8)))),  # CPUs shared over the GPUs, pinned
    ({"cuda": True}, {"CPU": 4.0, "GPU": 8.0}, (8, list(range(8)))),  # at least one per GPU
    ({"cuda": True, "workers_per_gpu": 2}, {"CPU": 16.0, "GPU": 4.0}, (8, [0, 1, 2, 3])),
    ({"cuda": True}, {"CPU": 16.0}, (0, None)),  # no GPU: nothing to judge CUDA cases on
])
def test_a_node_is_sized_by_the_resources_it_gives_ray(kw, resources, expected):
    assert pool(**kw)._size(resources) == expected


@pytest.mark.parametrize("address,ok", [(None, True), ("local", True), ("auto", True), ("10.0.0.1:6379", True),
                                        ("head-1.lan:6379", True), ("ray://10.0.0.1:10001", False),
                                        ("[::1]:6379", True), ("10.0.0.1", False), ("head:0", False),
                                        ("head:70000", False), ("http://head:6379", False)])
def test_addresses(address, ok):
    assert (bad_address(address) is None) == ok


def test_the_nodes_line_gives_each_node_and_the_sum_of_those_not_lost():
    text = nodes_text({"b:2": {"cases": 10, "cases_per_second": 0.5, "workers": 1, "state": "lost"},
                       "a:1": {"cases": 30, "cases_per_second": 1.5, "workers": 2, "state": "up"},
                       "c:3": {"cases": 20, "cases_per_second": 1.0, "workers": 2, "state": "done"}}, "; ")
    assert text == ("a:1: 30 cases, 1.500/s, 2 workers; b:2: 10 cases, 0.500/s, 1 workers (lost); "
                    "c:3: 20 cases, 1.000/s, 2 workers; 3 nodes, 60 cases, 2.500/s summed over the nodes not lost")
