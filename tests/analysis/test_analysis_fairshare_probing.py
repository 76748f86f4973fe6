"""Max-min fair shares with probing floors (draft-khalili-mptcp-performance-issues-06's "optimal
with probing cost", spec §5.4) against the closed forms of each scenario, and the floors taken
from a run's measured round trips."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_analysis_fairshare import _link_loads, _networks

from mptcplab import sim
from mptcplab.analysis.fairshare import InfeasibleFloors, fair_share, probing_floors
from mptcplab.analysis.metrics import PAYLOAD_FRACTION, run_metrics
from mptcplab.scenario import templates

PI = 0.06  # Mbit/s on the wire: the probing rate the draft's N1 = 10 figures imply (spec §5.4)


def _wire(share, flow: str) -> float:
    return share.per_flow_mbps[flow] / PAYLOAD_FRACTION


@pytest.mark.parametrize("n1", [10, 30])
def test_scenario_a_type2_users_lose_what_the_type1_probes_take_from_the_ap(n1: int) -> None:
    # Spec §5.4's idealised formulas: type2 = (N2·C2 − N1·π) / N2, type1 = C1 (a type-1 user's
    # probe through the AP also crosses its own server link, which it fills anyway).
    share = fair_share(templates.make("shared_ap", n1=n1), {"type1": [PI, PI]})
    assert _wire(share, "type2") == pytest.approx((10 * 1.0 - n1 * PI) / 10)
    assert _wire(share, "type1") == pytest.approx(1.0)
    ap_path = share.per_path_mbps["type1"][1] / PAYLOAD_FRACTION
    assert ap_path == pytest.approx(PI)


@pytest.mark.parametrize("n1", [10, 30])
def test_scenario_c_multipath_users_keep_their_probe_on_ap2(n1: int) -> None:
    # single = (N2·C2 − N1·π) / N2, multipath = C1 + π.
    share = fair_share(templates.make("two_ap", n1=n1), {"multipath": [PI, PI]})
    assert _wire(share, "singlepath") == pytest.approx((10 * 1.0 - n1 * PI) / 10)
    assert _wire(share, "multipath") == pytest.approx(1.0 + PI)


def test_scenario_b_red_probes_over_x_cost_half_a_probe_per_user() -> None:
    # Every unit a Red user sends over X crosses both X and T, the cut of 63 Mbit/s that all
    # 30 users share: 15·(Blue + Red) = 63 − 15·π, so each gets 2.1 − π/2. (Spec §5.4's
    # "(63 − 2·15·π)/30" counts the probe against the cut twice but not as the Red users'
    # goodput.) Blue's probes cost nothing: its path through T is one it uses anyway.
    floors = {"blue": [PI, PI], "red": [PI, PI]}
    share = fair_share(templates.make("multihomed_isp", red_multipath=True), floors)
    assert _wire(share, "blue") == pytest.approx(2.1 - PI / 2)
    assert _wire(share, "red") == pytest.approx(2.1 - PI / 2)
    single = fair_share(templates.make("multihomed_isp"), {"blue": [PI, PI]})
    assert _wire(single, "red") == pytest.approx(2.1)


def test_a_user_alone_on_disjoint_paths_fills_them_whatever_its_floors() -> None:
    scenario = templates.make("two_path", capacity_mbps=(6.0, 18.0))
    assert fair_share(scenario, {"flow": [1.0, 2.0]}) == fair_share(scenario)
    with pytest.raises(InfeasibleFloors):
        fair_share(scenario, {"flow": [7.0, 0.0]})


def test_floors_the_links_cannot_carry_are_refused() -> None:
    # 30 type-1 users probing at 0.5 Mbit/s need 15 Mbit/s of the 10 Mbit/s AP.
    with pytest.raises(InfeasibleFloors, match="150%"):
        fair_share(templates.make("shared_ap", n1=30), {"type1": [0.5, 0.5]})
    with pytest.raises(ValueError, match="expected 2 rates"):
        fair_share(templates.make("shared_ap", n1=30), {"type1": [0.5]})


def _report(rtts_ms: dict[str, list[float]]) -> dict[str, object]:
    flows = []
    for flow_id, rtts in rtts_ms.items():
        for copy, rtt in enumerate(rtts):
            flows.append(
                {
                    "id": f"{flow_id}#{copy}",
                    "subflows": [
                        {"index": 0, "mean_srtt_ms": rtt},
                        {"index": 1, "mean_srtt_ms": 2 * rtt},
                    ],
                }
            )
    return {"flows": flows}


def test_probing_floors_are_one_full_segment_per_measured_round_trip() -> None:
    scenario = templates.make("two_ap", n1=2)
    floors = probing_floors(_report({"multipath": [140.0, 160.0]}), scenario)
    # 1500 bytes on the wire per mean RTT: 150 ms on path 0, 300 ms on path 1. Single-path
    # users probe nothing.
    assert floors is not None and list(floors) == ["multipath"]
    assert floors["multipath"] == pytest.approx([12_000 / 0.150 / 1e6, 12_000 / 0.300 / 1e6])
    unmeasured = _report({"multipath": [140.0]})
    unmeasured["flows"][0]["subflows"][1]["mean_srtt_ms"] = 0.0
    assert probing_floors(unmeasured, scenario) is None


def test_the_run_metric_takes_the_probe_rate_from_the_runs_round_trips() -> None:
    scenario = templates.make("two_ap", n1=10, duration_s=30.0, warmup_s=5.0)
    result = sim.run(scenario)
    report = result.to_dict()
    # From a notebook: the Report sim.run returns serves as well as its dictionary.
    assert probing_floors(result, scenario) == probing_floors(report, scenario)
    metrics = run_metrics(report, scenario.to_dict())
    ap2_rtt_ms = statistics.mean(
        s["mean_srtt_ms"]
        for f in report["flows"]
        if f["id"].startswith("multipath#")
        for s in f["subflows"]
        if s["index"] == 1
    )
    pi = 1500 * 8 / (ap2_rtt_ms * 1e3)
    expected = (10 - 10 * pi) / 10 * PAYLOAD_FRACTION
    assert metrics["fair_share_probing_mbps.singlepath"] == pytest.approx(expected)
    assert metrics["fair_share_probing_mbps.multipath"] > metrics["fair_share_mbps.multipath"]


@settings(max_examples=100, deadline=None)
@given(_networks(multipath=True), st.floats(0.05, 0.9))
def test_floors_are_kept_the_links_hold_and_the_worst_user_gets_no_more(scenario, part) -> None:
    # Floors that fit: on every path `part` of what its narrowest link gives each path crossing
    # it. Adding them only constrains the programs, so the smallest share cannot grow.
    crossing = {link["id"]: 0 for link in scenario["links"]}
    for flow in scenario["flows"]:
        for path in flow["paths"]:
            for hop in path:
                crossing[hop] += flow["count"]
    caps = {link["id"]: link["capacity_mbps"] for link in scenario["links"]}
    floors = {
        flow["id"]: [
            part * min(caps[hop] / crossing[hop] for hop in path) for path in flow["paths"]
        ]
        for flow in scenario["flows"]
    }
    share = fair_share(scenario, floors)
    for hop, load in _link_loads(scenario, share).items():
        assert load <= caps[hop] * (1 + 1e-5)
    for flow_id, paths in share.per_path_mbps.items():
        for rate, least in zip(paths, floors[flow_id], strict=True):
            assert rate / PAYLOAD_FRACTION >= least * (1 - 1e-5)
    free = fair_share(scenario)
    assert min(share.per_flow_mbps.values()) <= min(free.per_flow_mbps.values()) * (1 + 1e-5)
