"""The most goodput flows can get together, against networks solved by hand and against the
max-min fair allocation (feasible, so never above it); and the CoNEXT 2013 balancing metric on
the ring of three bottlenecks."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from test_analysis_fairshare import _networks, _scenario, _tcp

from mptcplab import sim
from mptcplab.analysis.capacity_bound import max_total_goodput
from mptcplab.analysis.fairshare import fair_share
from mptcplab.analysis.metrics import PAYLOAD_FRACTION, run_metrics
from mptcplab.scenario import templates


def test_the_ring_of_three_bottlenecks_is_bounded_by_their_sum() -> None:
    # Each session fills its one-hop bottleneck; a two-hop subflow could only displace two
    # one-hop packets for one of its own.
    scenario = templates.make("three_bottleneck", capacity_mbps=(2.0, 30.0, 7.0))
    assert max_total_goodput(scenario) == pytest.approx(39.0 * PAYLOAD_FRACTION)


def test_a_flow_across_two_links_is_left_out_of_the_most_total() -> None:
    # A on a (1), B on a and b, C on b (2): the total is largest with B at zero.
    scenario = _scenario(
        {"a": 1.0, "b": 2.0}, [_tcp("A", ["a"]), _tcp("B", ["a", "b"]), _tcp("C", ["b"])]
    )
    assert max_total_goodput(scenario) == pytest.approx(3.0 * PAYLOAD_FRACTION)
    # Alone, B can have the narrower of its two links.
    alone = _scenario({"a": 1.0, "b": 2.0}, [_tcp("B", ["a", "b"])])
    assert max_total_goodput(alone) == pytest.approx(1.0 * PAYLOAD_FRACTION)


def test_users_of_one_entry_share_what_their_paths_carry() -> None:
    one = _scenario({"l": 10.0}, [_tcp("f", ["l"])])
    many = _scenario({"l": 10.0}, [_tcp("f", ["l"], count=40)])
    assert max_total_goodput(one) == max_total_goodput(many) == pytest.approx(10 * PAYLOAD_FRACTION)


# Capacities five orders of magnitude apart, 40 users per entry: HiGHS's simplex stopped
# with "numerical difficulties" at the fair share's tolerances (found by a random search).
NUMERICALLY_HARD = {
    "links": [
        {"id": "l0", "capacity_mbps": 100.0},
        {"id": "l1", "capacity_mbps": 0.01},
        {"id": "l2", "capacity_mbps": 100.0},
        {"id": "l3", "capacity_mbps": 0.05},
        {"id": "l4", "capacity_mbps": 906.7239769216757},
    ],
    "flows": [
        {"id": "f0", "protocol": "mptcp", "paths": [["l0", "l1"], ["l4", "l2"]], "count": 40},
        {"id": "f1", "protocol": "mptcp", "paths": [["l2", "l0"], ["l0"]], "count": 1},
        {"id": "f2", "protocol": "tcp", "paths": [["l0", "l1"]], "count": 40},
        {"id": "f3", "protocol": "tcp", "paths": [["l4"]], "count": 1},
        {"id": "f4", "protocol": "mptcp", "paths": [["l0", "l1"], ["l2"]], "count": 40},
    ],
}


@settings(max_examples=100, deadline=None)
@given(_networks(multipath=True))
@example(NUMERICALLY_HARD)
def test_the_max_min_fair_allocation_never_totals_more(scenario) -> None:
    share = fair_share(scenario)
    fair_total = sum(share.per_flow_mbps[f["id"]] * f["count"] for f in scenario["flows"])
    bound = max_total_goodput(scenario)
    assert fair_total <= bound * (1 + 1e-6)
    caps = sum(link["capacity_mbps"] for link in scenario["links"])
    assert bound <= caps * PAYLOAD_FRACTION * (1 + 1e-9)


def test_the_balancing_metric_on_a_simulated_ring() -> None:
    scenario = templates.make("three_bottleneck", capacity_mbps=5.0, duration_s=20.0)
    report = sim.run(scenario).to_dict()
    metrics = run_metrics(report, scenario.to_dict())
    total = sum(f["goodput_mbps"] for f in report["flows"])
    assert metrics["goodput_bound_ratio"] == pytest.approx(total / (15.0 * PAYLOAD_FRACTION))
    assert 0.5 < metrics["goodput_bound_ratio"] <= 1.0
    # Not for application-limited flows: the bound takes every flow as greedy.
    blocks = templates.make(
        "three_bottleneck", app={"kind": "blocks", "block_bytes": 8192}, duration_s=2.0
    )
    limited = sim.run(blocks).to_dict()
    assert "goodput_bound_ratio" not in run_metrics(limited, blocks.to_dict())
