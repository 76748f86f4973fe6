"""A run where MPTCP delivered nothing while single-path TCP did has a log gain of −inf: worse
than any other, not missing. Left out, the point's median was that of the replications that
worked, and a point where MPTCP stalled in two runs of three read as a gain (NorNet's critical
configurations, spec §5.3, class "< 50 %"). Oracles: the order statistics counted by hand and
the simulator's own stalled connection (one that starts too late to deliver a byte)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mptcplab import sim
from mptcplab.analysis.metrics import (
    CRITICAL_CLASSES,
    critical_class,
    metric_info,
    reference_metrics,
    run_metrics,
)
from mptcplab.analysis.paired import compare_variants
from mptcplab.analysis.tables import percentile_table, point_medians
from mptcplab.analysis.unfinished import differences, quantiles

INF = math.inf


def _late_mptcp(start_s: float) -> dict[str, object]:
    return {
        "duration_s": 2.0,
        "seed": 1,
        "links": [
            {"id": "a", "capacity_mbps": 5.0, "delay_ms": 50.0},
            {"id": "b", "capacity_mbps": 3.0, "delay_ms": 50.0},
        ],
        "flows": [
            {
                "id": "m",
                "protocol": "mptcp",
                "paths": [["a"], ["b"]],
                "start_s": start_s,
                "app": {"kind": "bulk"},
            }
        ],
    }


def test_a_connection_that_delivers_nothing_has_a_log_gain_of_minus_infinity() -> None:
    # Started 50 ms before the end, behind a 100 ms handshake: not a byte is delivered.
    stalled = _late_mptcp(1.95)
    mptcp = run_metrics(sim.run(stalled), stalled)["mptcp_goodput_mbps"]
    assert mptcp == 0.0
    values = reference_metrics(mptcp, [4.6, 2.7])
    assert values["log_gain"] == -INF
    assert values["aggregation_benefit_measured"] == -1.0
    assert metric_info("log_gain").stalled
    started = _late_mptcp(0.0)
    gain = reference_metrics(run_metrics(sim.run(started), started)["mptcp_goodput_mbps"], [4.6])
    assert math.isfinite(gain["log_gain"])


def _runs(points: list[list[float]], variant: str = "cc=lia") -> pd.DataFrame:
    rows = [
        {
            "role": "main",
            "status": "done",
            "design": 0,
            "point": point,
            "replication": r,
            "variant": variant,
            "cc": variant.removeprefix("cc="),
            "log_gain": gain,
        }
        for point, replications in enumerate(points)
        for r, gain in enumerate(replications)
    ]
    frame = pd.DataFrame(rows)
    frame.attrs["levels"] = ["cc"]
    frame.attrs["factors"] = []
    return frame


def test_a_point_where_mptcp_stalled_in_most_runs_is_critical() -> None:
    """Best path 5 Mbit/s; MPTCP delivered 0, 0 and 7.5 Mbit/s over three replications. The
    median ratio is 0 (class "< 50 %"); without the stalled runs it was 1.5, no critical point
    at all."""
    gains = [reference_metrics(g, [5.0, 3.0])["log_gain"] for g in (0.0, 0.0, 7.5)]
    medians = point_medians(_runs([gains]), ["log_gain"])
    median = medians["log_gain"].iloc[0]
    assert median == -INF
    assert critical_class(math.exp(median)) == CRITICAL_CLASSES[2]


def test_percentiles_count_stalled_points_as_the_smallest() -> None:
    medians = pd.DataFrame({"variant": ["v"] * 5, "log_gain": [0.4, -INF, 0.1, 0.3, 0.2]})
    row = percentile_table(medians, "log_gain", percentiles=[0, 25, 50, 100]).iloc[0]
    # Order statistics −inf, 0.1, 0.2, 0.3, 0.4 at positions 0 … 4 (q·(n − 1)).
    assert [row["p0"], row["p25"], row["p50"], row["p100"]] == [-INF, 0.1, 0.2, 0.4]
    assert row["mean"] == -INF
    # Between −inf and the first finite value, between two −inf, and between −inf and +inf.
    assert quantiles([-INF, 1.0, 2.0], [0.25]).tolist() == [-INF]
    assert quantiles([-INF, -INF, 1.0], [0.25]).tolist() == [-INF]
    assert math.isnan(quantiles([-INF, INF], [0.5])[0])
    # A metric that cannot be −inf still refuses it.
    with pytest.raises(ValueError, match=r"expected finite numbers$"):
        percentile_table(medians.rename(columns={"log_gain": "goodput_mbps"}), "goodput_mbps")


def test_two_stalled_points_are_tied_and_a_stall_is_the_worse_side() -> None:
    assert differences([-INF, -INF, 1.0], [-INF, 1.0, -INF]).tolist() == [0.0, -INF, INF]
    # OLIA stalls at every point where LIA gains: a sign test over 8 points, OLIA lower.
    frame = pd.concat(
        [_runs([[0.3, 0.3, 0.3]] * 8, "cc=lia"), _runs([[-INF, -INF, 0.5]] * 8, "cc=olia")]
    )
    frame.attrs = {"levels": ["cc"], "factors": []}
    medians = point_medians(frame, ["log_gain"])
    row = compare_variants(medians, "log_gain", higher_is_better=True).iloc[0]
    assert row["median_difference"] == -INF and row["b_higher_share"] == 0.0
    assert row["p_value"] == pytest.approx(2 * 0.5**8)
    assert row["verdict"] == "olia lower (worse)"
