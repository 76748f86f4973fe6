"""cwnd_recovery_s: the time a subflow's window takes to regain its former mean once competing
flows leave, on window traces whose answer is known by construction, and on the simulator
where the competing flows' departure sets the clock."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mptcplab import sim
from mptcplab.analysis.metrics import FLOW_METRICS, metric_info
from mptcplab.analysis.recovery import cwnd_recovery_s, subflow_recovery_s
from mptcplab.scenario import templates


def ramp_trace(level: float, dip: float, back_at_s: float) -> tuple[list[float], list[float]]:
    """A window at ``level`` until 4 s, at ``dip`` while cross traffic runs (4–8 s), rising
    linearly from 8 s to reach ``level`` again at ``back_at_s``; samples every 0.5 s."""
    times = [0.5 * k for k in range(41)]
    values = []
    for t in times:
        if t < 4.0:
            values.append(level)
        elif t < 8.0:
            values.append(dip)
        else:
            values.append(min(level, dip + (level - dip) * (t - 8.0) / (back_at_s - 8.0)))
    return times, values


def test_the_window_is_back_when_it_first_reaches_its_former_mean() -> None:
    times, values = ramp_trace(level=60.0, dip=10.0, back_at_s=14.0)
    got = subflow_recovery_s(times, values, reference_from_s=1.0, joined_s=4.0, left_s=8.0)
    assert got == pytest.approx(6.0)


def test_no_reference_gives_no_value_and_no_return_an_infinite_one() -> None:
    times, values = ramp_trace(level=60.0, dip=10.0, back_at_s=14.0)
    assert subflow_recovery_s(times, values, reference_from_s=4.0, joined_s=4.0, left_s=8.0) is None
    # Never back before the trace ends: the recovery takes longer than the run.
    flat = [60.0 if t < 4 else 10.0 for t in times]
    got = subflow_recovery_s(times, flat, reference_from_s=0.0, joined_s=4.0, left_s=8.0)
    assert got == math.inf


def scenario_and_report(
    back_at_s: dict[str, float],
    *,
    trace: bool = True,
    server: bool = False,
    cross_path: tuple[str, ...] = ("b",),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two users of an MPTCP entry over links a and b (each behind link ``server`` that both
    paths share, with ``server``); TCP flows on ``cross_path`` from 4 s to 8 s."""
    front = ["server"] if server else []
    scenario = {
        "duration_s": 20.0,
        "warmup_s": 1.0,
        "flows": [
            {"id": "mp", "protocol": "mptcp", "paths": [[*front, "a"], [*front, "b"]], "count": 2},
            {
                "id": "cross",
                "protocol": "tcp",
                "paths": [list(cross_path)],
                "start_s": 4.0,
                "stop_s": 8.0,
            },
            {"id": "other", "protocol": "tcp", "paths": [["a"]]},
        ],
    }
    series = []
    for user, back in back_at_s.items():
        times, values = ramp_trace(level=60.0, dip=10.0, back_at_s=back)
        # Path a never changes; a dip there would show the wrong subflow was measured.
        series.append({"name": f"{user}/0", "values": [5.0 for _ in times]})
        series.append({"name": f"{user}/1", "values": values})
    report: dict[str, Any] = {
        "flows": [{"id": u, "goodput_mbps": 1.0} for u in back_at_s]
        + [{"id": "cross", "goodput_mbps": 1.0}, {"id": "other", "goodput_mbps": 1.0}],
        "traces": {"time_s": times, "cwnd": series} if trace else None,
    }
    return scenario, report


def test_the_subflow_that_shared_a_link_with_the_leaving_flows_is_measured() -> None:
    scenario, report = scenario_and_report({"mp#0": 12.0, "mp#1": 16.0})
    # Users back 4 s and 8 s after the cross traffic left: their mean.
    assert cwnd_recovery_s(report, scenario, "mp") == pytest.approx(6.0)
    # The flows that never stop compete with nobody that leaves.
    assert cwnd_recovery_s(report, scenario, "other") is None
    # The campaign metric of the same name.
    assert metric_info("cwnd_recovery_s.mp").unit == "s"
    extract = FLOW_METRICS["cwnd_recovery_s"].extract
    assert extract(report, scenario, "mp") == pytest.approx(6.0)


def test_a_link_both_paths_share_does_not_make_the_other_path_a_competitor() -> None:
    # As in the draft's scenario: both paths cross the server link, the TCP flows cross it and
    # path b's own link. Path a's window never dipped (back at once, 0 s); only b's counts.
    scenario, report = scenario_and_report(
        {"mp#0": 12.0, "mp#1": 16.0}, server=True, cross_path=("server", "b")
    )
    assert cwnd_recovery_s(report, scenario, "mp") == pytest.approx(6.0)


def test_flows_that_meet_only_on_the_shared_link_compete_with_every_path() -> None:
    scenario, report = scenario_and_report(
        {"mp#0": 12.0, "mp#1": 16.0}, server=True, cross_path=("server",)
    )
    # Path a's flat window is back at once (0 s) for both users, path b's after 4 s and 8 s.
    assert cwnd_recovery_s(report, scenario, "mp") == pytest.approx((0 + 0 + 4 + 8) / 4)


def test_a_path_whose_competitors_came_before_the_warm_up_is_left_out() -> None:
    """Path a's competitor ran from the start, so path a has no window from before it to
    return to; path b's came after the warm-up and is measured. The check before a campaign
    counts the metric as given here, so it must not be blank."""
    from mptcplab.analysis.metric_needs import unmet_need

    scenario, report = scenario_and_report({"mp#0": 12.0, "mp#1": 16.0})
    early = {"id": "early", "protocol": "tcp", "paths": [["a"]], "start_s": 0.0, "stop_s": 6.0}
    scenario["flows"].append(early)
    scenario["trace"] = ["cwnd"]
    report["flows"].append({"id": "early", "goodput_mbps": 1.0})
    assert unmet_need("cwnd_recovery_s.mp", [scenario], "the campaign's scenarios") is None
    assert cwnd_recovery_s(report, scenario, "mp") == pytest.approx(6.0)


def test_without_a_window_trace_there_is_no_recovery_time() -> None:
    scenario, report = scenario_and_report({"mp#0": 12.0}, trace=False)
    assert cwnd_recovery_s(report, scenario, "mp") is None


def test_the_simulator_takes_back_a_path_after_the_cross_traffic_leaves() -> None:
    # The responsiveness scenario at a tenth of its length: the MPTCP window on path 2 shrinks
    # while five TCP flows share it and grows back after they leave, within the run.
    scenario = templates.responsiveness(
        cc="lia", cross_start_s=10.0, cross_stop_s=20.0, duration_s=60.0, warmup_s=3.0
    )
    report = sim.run(scenario).to_dict()
    data = scenario.to_dict()
    recovery = cwnd_recovery_s(report, data, "mptcp")
    assert recovery is not None and 0.0 < recovery < 40.0
    # It cannot have regained the window before the competitors even left: while they ran,
    # the path's window stayed well under its former mean.
    times = report["traces"]["time_s"]
    path2 = next(s["values"] for s in report["traces"]["cwnd"] if s["name"] == "mptcp/1")
    before = [w for t, w in zip(times, path2, strict=True) if 3.0 <= t < 10.0]
    during = [w for t, w in zip(times, path2, strict=True) if 12.0 <= t < 20.0]
    assert max(during) < sum(before) / len(before)
