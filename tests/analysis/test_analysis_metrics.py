"""Metric formulas against hand-computed values (spec §5.1–§5.3), and their extraction from real
simulator reports."""

from __future__ import annotations

import math

import pytest

from mptcplab import sim
from mptcplab.analysis.metrics import (
    FLOW_METRICS,
    PAYLOAD_FRACTION,
    RUN_METRICS,
    aggregation_benefit,
    jain_index,
    log_gain,
    metric_info,
    path_capacities_mbps,
    reference_metrics,
    run_metrics,
)
from mptcplab.scenario import templates


@pytest.mark.parametrize(
    ("goodput", "capacities", "expected"),
    [
        (15.0, [10.0, 5.0], 1.0),  # the sum of the paths: perfect aggregation
        (10.0, [10.0, 5.0], 0.0),  # as good as the best path
        (0.0, [10.0, 5.0], -1.0),  # nothing delivered
        (12.5, [10.0, 5.0], 0.5),  # (12.5 - 10) / (15 - 10)
        (5.0, [10.0, 5.0], -0.5),  # (5 - 10) / 10
        (2.5, [10.0, 5.0], -0.75),
        (16.0, [4.0, 8.0, 4.0], 1.0),  # three paths: (16 - 8) / (16 - 8)
        (10.0, [4.0, 8.0, 4.0], 0.25),  # (10 - 8) / 8
        (12.0, [10.0, 0.0], 0.0),  # guard: the other path adds nothing
        (10.0, [10.0], 0.0),  # guard: a single path
        (4.0, [10.0], -0.6),  # below the single path: (4 - 10) / 10
        (0.0, [0.0, 0.0], 0.0),  # guard with nothing to aggregate
        (20.0, [10.0, 5.0], 2.0),  # measured C_i may be beaten: not clipped
    ],
)
def test_aggregation_benefit_cases(goodput, capacities, expected) -> None:
    assert aggregation_benefit(goodput, capacities) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("goodput", "capacities"), [(1.0, []), (-1.0, [1.0]), (1.0, [-1.0]), (math.nan, [1.0])]
)
def test_aggregation_benefit_rejects_bad_input(goodput, capacities) -> None:
    with pytest.raises(ValueError):
        aggregation_benefit(goodput, capacities)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_jain_of_equal_shares_is_one(n) -> None:
    assert jain_index([3.5] * n) == pytest.approx(1.0)


@pytest.mark.parametrize("n", [2, 3, 7])
def test_jain_of_one_hot_is_one_over_n(n) -> None:
    shares = [0.0] * n
    shares[n // 2] = 4.0
    assert jain_index(shares) == pytest.approx(1.0 / n)


def test_jain_hand_case_and_degenerate() -> None:
    assert jain_index([1.0, 2.0, 3.0]) == pytest.approx(36.0 / 42.0)  # 6² / (3 · 14)
    assert math.isnan(jain_index([0.0, 0.0]))


def test_log_gain() -> None:
    assert log_gain(20.0, 10.0) == pytest.approx(math.log(2.0))
    assert log_gain(10.0, 10.0) == 0.0
    assert log_gain(5.0, 10.0) == pytest.approx(-math.log(2.0))
    # MPTCP delivered nothing: worse than any ratio, not missing; without TCP, no ratio.
    assert log_gain(0.0, 10.0) == -math.inf
    assert math.isnan(log_gain(10.0, 0.0)) and math.isnan(log_gain(0.0, 0.0))


def test_reference_metrics_use_the_best_path_for_the_gain() -> None:
    values = reference_metrics(12.0, [8.0, 6.0])
    assert values["aggregation_benefit_measured"] == pytest.approx((12.0 - 8.0) / 6.0)
    assert values["log_gain"] == pytest.approx(math.log(12.0 / 8.0))


def test_path_capacity_is_the_narrowest_link_payload() -> None:
    scenario = {
        "links": [
            {"id": "a", "capacity_mbps": 10.0},
            {"id": "b", "capacity_mbps": 4.0},
            {"id": "c", "capacity_mbps": 6.0},
        ],
        "flows": [{"id": "f", "paths": [["a", "b"], ["c"]]}],
    }
    assert path_capacities_mbps(scenario, "f#1") == pytest.approx(
        [4.0 * 1448 / 1500, 6.0 * 1448 / 1500]
    )


def test_run_metrics_of_a_real_two_path_run() -> None:
    scenario = templates.make("two_path", capacity_mbps=(8.0, 2.0), duration_s=3.0).to_dict()
    report = sim.run(scenario).to_dict()
    metrics = run_metrics(report, scenario)
    flow = report["flows"][0]
    assert metrics["goodput_mbps"] == pytest.approx(flow["goodput_mbps"])
    assert metrics["mptcp_goodput_mbps"] == pytest.approx(flow["goodput_mbps"])
    caps = [8.0 * PAYLOAD_FRACTION, 2.0 * PAYLOAD_FRACTION]
    assert metrics["aggregation_benefit"] == pytest.approx(
        aggregation_benefit(flow["goodput_mbps"], caps)
    )
    # A run cannot deliver more than its links carry.
    assert flow["goodput_mbps"] <= sum(caps) * (1 + 1e-9)
    assert -1.0 <= metrics["aggregation_benefit"] <= 1.0
    assert "jain_fairness" not in metrics  # one flow: no fairness to speak of
    assert "block_latency_p50_ms" not in metrics  # a bulk transfer has no blocks


def test_run_metrics_jain_over_several_flows() -> None:
    scenario = templates.make("three_bottleneck", duration_s=2.0).to_dict()
    report = sim.run(scenario).to_dict()
    metrics = run_metrics(report, scenario)
    goodputs = [f["goodput_mbps"] for f in report["flows"]]
    assert len(goodputs) == 3
    assert metrics["jain_fairness"] == pytest.approx(
        sum(goodputs) ** 2 / (3 * sum(g * g for g in goodputs))
    )
    assert 1 / 3 <= metrics["jain_fairness"] <= 1.0


def _two_bulk_and_a_transfer(
    duration_s: float, warmup_s: float, transfer_bytes: int, transfer_id: str, cubic_b: bool = False
) -> dict:
    """Bulk TCP flows a and b (b with CUBIC when ``cubic_b``) and a finite transfer on one
    10 Mbit/s link."""
    tcp = {"protocol": "tcp", "paths": [["l"]]}
    return {
        "duration_s": duration_s,
        "warmup_s": warmup_s,
        "links": [{"id": "l", "capacity_mbps": 10.0, "delay_ms": 10.0}],
        "flows": [
            tcp | {"id": "a"},
            tcp | {"id": "b"} | ({"cc": "cubic"} if cubic_b else {}),
            tcp | {"id": transfer_id, "app": {"kind": "size", "bytes": transfer_bytes}},
        ],
    }


def test_jain_compares_the_bulk_flows_active_through_the_window() -> None:
    """A finite transfer's goodput is what it asked for, not a share: Jain's index is over the
    two bulk flows (hand formula), and there is none when one of them starts after the
    warm-up or only one bulk flow is left."""
    flow = {"protocol": "tcp", "paths": [["l"]]}
    scenario = _two_bulk_and_a_transfer(4.0, 1.0, 20_000, "small", cubic_b=True)
    report = sim.run(scenario).to_dict()
    a, b, small = (f["goodput_mbps"] for f in report["flows"])
    assert small < 0.1 * min(a, b)
    metrics = run_metrics(report, scenario)
    assert metrics["jain_fairness"] == pytest.approx((a + b) ** 2 / (2 * (a * a + b * b)))
    late = scenario | {"flows": [*scenario["flows"][:2], flow | {"id": "c", "start_s": 2.0}]}
    assert "jain_fairness" not in run_metrics(sim.run(late).to_dict(), late)
    alone = scenario | {"flows": [scenario["flows"][0], scenario["flows"][2]]}
    assert "jain_fairness" not in run_metrics(sim.run(alone).to_dict(), alone)


def _subflow(index: int, goodput: float) -> dict[str, object]:
    return {"index": index, "goodput_mbps": goodput}


def test_path0_share_counts_the_mptcp_subflows_only() -> None:
    report = {
        "flows": [
            {"protocol": "mptcp", "subflows": [_subflow(0, 3.0), _subflow(1, 1.0)]},
            {"protocol": "mptcp", "subflows": [_subflow(0, 1.0), _subflow(1, 5.0)]},
            # Single-path TCP beside them carries nothing of the split.
            {"protocol": "tcp", "subflows": [_subflow(0, 50.0)]},
        ]
    }
    assert RUN_METRICS["path0_share"].extract(report, {}) == pytest.approx(4.0 / 10.0)
    assert RUN_METRICS["path0_share"].extract({"flows": report["flows"][2:]}, {}) is None
    nothing = {"flows": [{"protocol": "mptcp", "subflows": [_subflow(0, 0.0), _subflow(1, 0.0)]}]}
    assert RUN_METRICS["path0_share"].extract(nothing, {}) is None
    # A split, not a score: no end of it is the worse one.
    assert metric_info("path0_share").higher_is_better is None


def test_path0_share_of_uncoupled_subflows_is_the_capacity_split() -> None:
    # Uncoupled subflows each fill their own bottleneck (ample buffers, no loss), so the split
    # is the capacities' 6 : 18, a quarter on path 0.
    scenario = templates.make(
        "two_path", capacity_mbps=(6.0, 18.0), cc="reno", rcvbuf=4194304, duration_s=20.0
    ).to_dict()
    metrics = run_metrics(sim.run(scenario).to_dict(), scenario)
    assert metrics["path0_share"] == pytest.approx(0.25, abs=0.02)


def _chain_of_two_links() -> dict:
    """Link a (1 Mbit/s) carries A and B, link b (2 Mbit/s) B and the two C users."""
    return {
        "links": [{"id": "a", "capacity_mbps": 1.0}, {"id": "b", "capacity_mbps": 2.0}],
        "flows": [
            {"id": "A", "protocol": "tcp", "paths": [["a"]]},
            {"id": "B", "protocol": "tcp", "paths": [["a", "b"]]},
            {"id": "C", "protocol": "tcp", "paths": [["b"]], "count": 2},
        ],
    }


def test_worst_fair_share_ratio_of_hand_made_reports() -> None:
    # Link a (1 Mbit/s) carries A and B, link b (2) B and C: max-min fair A = B = 0.5, C = 1.5
    # (wire rates; goodput is their payload share).
    scenario = _chain_of_two_links()
    # C's two flows share b with B: B and A 0.5, each C (2 - 0.5) / 2 = 0.75.
    fair = {"A": 0.5, "B": 0.5, "C#0": 0.75, "C#1": 0.75}
    goodput = {"A": 0.45, "B": 0.2, "C#0": 0.9, "C#1": 0.72}
    report = {
        "flows": [{"id": k, "goodput_mbps": v * PAYLOAD_FRACTION} for k, v in goodput.items()]
    }
    extract = RUN_METRICS["worst_fair_share_ratio"].extract
    assert extract(report, scenario) == pytest.approx(min(goodput[k] / fair[k] for k in fair))
    assert extract(report, scenario) == pytest.approx(0.2 / 0.5)
    # B gets 0.45 and one of the C users falls to 0.3: the worst user is that one, the worst
    # class C with its mean.
    report["flows"][1]["goodput_mbps"] = 0.45 * PAYLOAD_FRACTION
    report["flows"][3]["goodput_mbps"] = 0.3 * PAYLOAD_FRACTION
    assert extract(report, scenario) == pytest.approx(0.3 / 0.75)
    by_group = RUN_METRICS["worst_group_fair_share_ratio"].extract
    assert by_group(report, scenario) == pytest.approx(min(0.45 / 0.5, (0.9 + 0.3) / 2 / 0.75))


def test_worst_fair_share_ratio_of_one_reno_flow_is_its_link_share() -> None:
    # One Reno flow with a one-BDP drop-tail buffer keeps the link ≥ 93 % busy (issue #2's
    # oracle), and cannot exceed the link's payload rate, its fair share.
    scenario = {
        "duration_s": 20.0,
        "links": [
            {
                "id": "l",
                "capacity_mbps": 10.0,
                "delay_ms": 20.0,
                "queue": {"kind": "droptail", "packets": 34},  # 10 Mbit/s × 40 ms in 1500 B
            }
        ],
        "flows": [{"id": "t", "protocol": "tcp", "paths": [["l"]]}],
    }
    metrics = run_metrics(sim.run(scenario).to_dict(), scenario)
    assert 0.93 <= metrics["worst_fair_share_ratio"] <= 1.0


def test_fair_shares_need_every_flow_greedy() -> None:
    """A transfer that completes before the measurement wants nothing of the link in it: the
    two bulk flows' max-min shares are then half the link each, and their goodput cannot add
    up to more than the link (a worst ratio above 1 is impossible). Shares that count it as a
    greedy user are a third each; they are not set beside the goodputs at all."""
    from mptcplab.analysis.metric_needs import unmet_need

    scenario = _two_bulk_and_a_transfer(8.0, 2.0, 100_000, "c")
    report = sim.run(scenario).to_dict()
    a, b, c = report["flows"]
    assert c["completion_s"] < scenario["warmup_s"] and c["goodput_mbps"] == 0.0
    assert a["goodput_mbps"] + b["goodput_mbps"] <= 10.0 * PAYLOAD_FRACTION * (1 + 1e-9)
    metrics = run_metrics(report, scenario)
    shares = [n for n in metrics if "fair_share" in n]
    assert shares == []
    for name in ("worst_fair_share_ratio", "fair_share_mbps.a", "fair_share_probing_mbps.a"):
        need = unmet_need(name, [scenario], "the campaign's scenarios")
        assert need is not None and "bulk flows only" in need
    # The same run without the transfer has them.
    bulk_only = scenario | {"flows": scenario["flows"][:2]}
    metrics = run_metrics(sim.run(bulk_only).to_dict(), bulk_only)
    assert metrics["fair_share_mbps.a"] == pytest.approx(5.0 * PAYLOAD_FRACTION)
    assert 0.5 <= metrics["worst_fair_share_ratio"] <= 1.0 + 1e-9


@pytest.mark.parametrize(
    "change",
    [{"start_s": 11.0}, {"stop_s": 11.0}, {"app": {"kind": "size", "bytes": 5_000_000}}],
    ids=["starts late", "stops early", "finite transfer"],
)
def test_aggregation_benefit_needs_the_mptcp_flow_greedy_through_the_window(change) -> None:
    """Kaspar's measure sets a bulk transfer's goodput beside the paths' capacities. An MPTCP
    flow that aggregates two 10 Mbit/s paths perfectly but runs for half the window (or moves
    5 MB in about two seconds) has a window goodput near one path's: scored, it would read as
    no gain at all, or as near −1."""
    from mptcplab.analysis.metric_needs import unmet_need

    scenario = {
        "duration_s": 20.0,
        "warmup_s": 2.0,
        "links": [
            {"id": "p1", "capacity_mbps": 10.0, "delay_ms": 10.0},
            {"id": "p2", "capacity_mbps": 10.0, "delay_ms": 10.0},
        ],
        "flows": [{"id": "mp", "protocol": "mptcp", "cc": "lia", "paths": [["p1"], ["p2"]]}],
    }
    whole = run_metrics(sim.run(scenario).to_dict(), scenario)
    assert whole["aggregation_benefit"] > 0.9
    scenario["flows"][0] |= change
    assert "aggregation_benefit" not in run_metrics(sim.run(scenario).to_dict(), scenario)
    need = unmet_need("aggregation_benefit", [scenario], "the campaign's scenarios")
    assert need is not None and "bulk flow active through the measurement" in need


def test_fair_share_ratios_need_every_flow_active_through_the_measurement() -> None:
    scenario = {
        "warmup_s": 2.0,
        "links": [{"id": "l", "capacity_mbps": 10.0}],
        "flows": [
            {"id": "a", "protocol": "tcp", "paths": [["l"]], "start_s": 2.0},
            {"id": "b", "protocol": "tcp", "paths": [["l"]]},
        ],
    }
    report = {"flows": [{"id": k, "goodput_mbps": 4.0} for k in ("a", "b")]}
    for name in ("worst_fair_share_ratio", "worst_group_fair_share_ratio"):
        # Started by the end of the warm-up: each has half the link.
        assert RUN_METRICS[name].extract(report, scenario) == pytest.approx(
            4.0 / (5.0 * PAYLOAD_FRACTION)
        )
    scenario["flows"][0]["start_s"] = 3.0  # one second into the measurement: no baseline
    for name in ("worst_fair_share_ratio", "worst_group_fair_share_ratio"):
        assert RUN_METRICS[name].extract(report, scenario) is None


def test_flow_entry_metrics_give_each_class_its_user_and_group_goodput_and_fair_share() -> None:
    # The hand-made network above: A and B share link a (1 Mbit/s), B and two C users link b
    # (2 Mbit/s); max-min fair A = B = 0.5, each C 0.75 (wire rates).
    scenario = _chain_of_two_links()
    goodput = {"A": 0.45, "B": 0.2, "C#0": 0.9, "C#1": 0.3}
    report = {"flows": [{"id": k, "goodput_mbps": v} for k, v in goodput.items()]}
    user = FLOW_METRICS["user_goodput_mbps"].extract
    share = FLOW_METRICS["fair_share_mbps"].extract
    assert user(report, scenario, "A") == pytest.approx(0.45)
    assert user(report, scenario, "C") == pytest.approx((0.9 + 0.3) / 2)
    group = FLOW_METRICS["group_goodput_mbps"].extract
    assert group(report, scenario, "C") == pytest.approx(0.9 + 0.3)
    assert group(report, scenario, "A") == pytest.approx(0.45)
    assert group(report, scenario, "nobody") is None
    assert share(report, scenario, "A") == pytest.approx(0.5 * PAYLOAD_FRACTION)
    assert share(report, scenario, "B") == pytest.approx(0.5 * PAYLOAD_FRACTION)
    assert share(report, scenario, "C") == pytest.approx(0.75 * PAYLOAD_FRACTION)
    # A flow starting after the warm-up has no share to compare with: none is given.
    scenario["warmup_s"] = 1.0
    scenario["flows"][0]["start_s"] = 2.0
    assert share(report, scenario, "A") is None and user(report, scenario, "A") == 0.45


def test_every_flow_entry_of_a_run_gets_its_metrics() -> None:
    # Two TCP users and one MPTCP user on two 10 Mbit/s links: max-min fair, pooling, every
    # user gets 20/3 Mbit/s (the MPTCP user takes what the two TCP users leave).
    scenario = {
        "duration_s": 5.0,
        "links": [
            {"id": "a", "capacity_mbps": 10.0, "delay_ms": 10.0},
            {"id": "b", "capacity_mbps": 10.0, "delay_ms": 10.0},
        ],
        "flows": [
            {"id": "tcp", "protocol": "tcp", "paths": [["a"]]},
            {"id": "tcp-b", "protocol": "tcp", "paths": [["b"]]},
            {"id": "mp", "protocol": "mptcp", "cc": "lia", "paths": [["a"], ["b"]]},
        ],
    }
    report = sim.run(scenario).to_dict()
    metrics = run_metrics(report, scenario)
    for flow in ("tcp", "tcp-b", "mp"):
        goodput = next(f["goodput_mbps"] for f in report["flows"] if f["id"] == flow)
        assert metrics[f"user_goodput_mbps.{flow}"] == pytest.approx(goodput)
        assert metrics[f"fair_share_mbps.{flow}"] == pytest.approx(20 / 3 * PAYLOAD_FRACTION)


def test_flow_entry_metric_names() -> None:
    from mptcplab.analysis.metrics import all_metric_names, flow_metric, is_metric_name

    assert "user_goodput_mbps.<flow>" in all_metric_names()
    assert is_metric_name("user_goodput_mbps.type2")
    # A flow id may hold dots; '#' is the count suffix and no flow id has it.
    assert flow_metric("fair_share_mbps.ap.1")[1] == "ap.1"
    for name in (
        "user_goodput_mbps",
        "user_goodput_mbps.",
        "goodput_mbps.x",
        "fair_share_mbps.a#0",
    ):
        assert not is_metric_name(name), name
    info = metric_info("user_goodput_mbps.type2")
    assert info.name == "user_goodput_mbps.type2" and "'type2'" in info.description
    assert info.unit == "Mbit/s" and info.higher_is_better is True
    with pytest.raises(KeyError):
        metric_info("goodput")


def _blocks_scenario(slow_mbps: float, stop_s: float | None = None) -> dict:
    def blocks(flow_id: str, link: str) -> dict:
        flow = {
            "id": flow_id,
            "protocol": "tcp",
            "paths": [[link]],
            "rcvbuf_bytes": 262_144,
            "app": {"kind": "blocks", "block_bytes": 65_536},
        }
        if stop_s is not None and link == "slow":
            flow["stop_s"] = stop_s
        return flow

    return {
        "duration_s": 8.0,
        "warmup_s": 2.0,
        "links": [
            {"id": "fast", "capacity_mbps": 10.0, "delay_ms": 10.0},
            {"id": "slow", "capacity_mbps": slow_mbps, "delay_ms": 10.0},
        ],
        "flows": [blocks("a", "fast"), blocks("b", "slow")],
    }


def test_a_flow_that_completes_no_block_makes_the_worst_latency_unfinished() -> None:
    # 64 KB blocks over 0.02 Mbit/s: the first takes about 26 s, far past the 8 s run. The worst
    # flow's latency is that flow's, longer than the run shows, not the fast flow's alone.
    scenario = _blocks_scenario(0.02)
    report = sim.run(scenario).to_dict()
    assert report["flows"][1]["block_latency"] is None
    metrics = run_metrics(report, scenario)
    assert metrics["block_latency_p50_ms"] == math.inf
    assert metrics["block_latency_p95_ms"] == math.inf
    assert metric_info("block_latency_p50_ms").unfinished
    # Both flows complete blocks at 5 Mbit/s: the worst is finite.
    scenario = _blocks_scenario(5.0)
    metrics = run_metrics(sim.run(scenario).to_dict(), scenario)
    assert math.isfinite(metrics["block_latency_p50_ms"])


def test_a_flow_that_stopped_writing_before_the_warm_up_does_not_count() -> None:
    scenario = _blocks_scenario(0.02, stop_s=1.0)
    report = sim.run(scenario).to_dict()
    metrics = run_metrics(report, scenario)
    assert metrics["block_latency_p50_ms"] == report["flows"][0]["block_latency"]["p50_ms"]
