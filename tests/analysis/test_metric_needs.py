"""What a metric needs of a scenario (analysis/metric_needs.py) against what the simulator's
runs give: a metric said to be out of reach of a scenario has no value in its run, and one
said to be within reach has one. A campaign must never be refused a metric its runs would
have had."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mptcplab import sim
from mptcplab.analysis.metric_needs import FLOW_NEEDS, NEEDS, unmet_need
from mptcplab.analysis.metrics import run_metrics

if not sim.available():  # pragma: no cover - the build always provides it
    pytest.skip("the simulator extension is not built (make build)", allow_module_level=True)

LINKS = [
    {"id": "a", "capacity_mbps": 8.0, "delay_ms": 10.0, "queue": {"kind": "droptail", "ms": 40}},
    {"id": "b", "capacity_mbps": 4.0, "delay_ms": 20.0, "queue": {"kind": "droptail", "ms": 40}},
]
MPTCP = {"id": "mp", "protocol": "mptcp", "paths": [["a"], ["b"]]}
TCP = {"id": "tcp", "protocol": "tcp", "paths": [["a"]]}


def _scenario(*flows: dict[str, Any], duration_s: float = 3.0) -> dict[str, Any]:
    return {
        "duration_s": duration_s,
        "warmup_s": 1.0,
        "seed": 3,
        "links": copy.deepcopy(LINKS),
        "flows": [copy.deepcopy(f) for f in flows],
    }


SCENARIOS = {
    "one MPTCP bulk flow": _scenario(MPTCP),
    "one TCP flow": _scenario(TCP),
    "MPTCP and TCP": _scenario(MPTCP, TCP),
    "two TCP users of one entry": _scenario({**TCP, "count": 2}),
    "MPTCP writing blocks": _scenario({**MPTCP, "app": {"kind": "blocks", "block_bytes": 16384}}),
    # About 2 s at the paths' 12 Mbit/s: it still sends through the measurement window.
    "a finite transfer beside bulk TCP": _scenario(
        {**MPTCP, "app": {"kind": "size", "bytes": 3_000_000}}, TCP, duration_s=5.0
    ),
    "TCP starting after the warm-up": _scenario(MPTCP, {**TCP, "start_s": 1.5}),
    "TCP passing through, cwnd traced": {
        **_scenario(MPTCP, {**TCP, "start_s": 1.5, "stop_s": 2.0}, duration_s=4.0),
        "trace": ["cwnd"],
        "trace_interval_ms": 10.0,
    },
    "TCP passing through from the start, cwnd traced": {
        **_scenario(MPTCP, {**TCP, "stop_s": 2.0}, duration_s=4.0),
        "trace": ["cwnd"],
        "trace_interval_ms": 10.0,
    },
}


@pytest.fixture(scope="module")
def metrics() -> dict[str, dict[str, float]]:
    return {name: run_metrics(sim.run(s).to_dict(), s) for name, s in SCENARIOS.items()}


@pytest.mark.parametrize("case", SCENARIOS)
def test_a_metric_has_a_value_exactly_where_its_need_is_met(
    case: str, metrics: dict[str, dict[str, float]]
) -> None:
    # Reference metrics come from the single-path reference runs, not from run_metrics.
    for name in sorted(set(NEEDS) - {"aggregation_benefit_measured", "log_gain"}):
        unmet = unmet_need(name, [SCENARIOS[case]], "the scenario")
        assert (unmet is None) == (name in metrics[case]), (name, unmet, metrics[case].get(name))


@pytest.mark.parametrize("case", SCENARIOS)
def test_a_flow_entry_metric_out_of_reach_has_no_value(
    case: str, metrics: dict[str, dict[str, float]]
) -> None:
    # Only this way round: a window that never regains its mean leaves cwnd_recovery_s blank
    # in a run that met its need.
    for prefix in FLOW_NEEDS:
        for flow in SCENARIOS[case]["flows"]:
            name = f"{prefix}.{flow['id']}"
            if unmet_need(name, [SCENARIOS[case]], "the scenario") is not None:
                assert name not in metrics[case], (name, metrics[case][name])


def test_the_recovery_of_the_flow_left_behind_is_within_reach_and_measured(
    metrics: dict[str, dict[str, float]],
) -> None:
    case = "TCP passing through, cwnd traced"
    assert unmet_need("cwnd_recovery_s.mp", [SCENARIOS[case]], "it") is None
    assert "cwnd_recovery_s.mp" in metrics[case]


def test_every_need_is_unmet_somewhere_and_met_somewhere() -> None:
    for name in [*NEEDS, *(f"{prefix}.mp" for prefix in FLOW_NEEDS)]:
        met = [unmet_need(name, [s], "it") is None for s in SCENARIOS.values()]
        assert any(met) and not all(met), name


def test_a_finite_transfer_completes_beside_bulk_cross_traffic(
    metrics: dict[str, dict[str, float]],
) -> None:
    s = SCENARIOS["a finite transfer beside bulk TCP"]
    report = sim.run(s).to_dict()
    transfer = next(f for f in report["flows"] if f["id"] == "mp")
    assert transfer["completion_s"] is not None
    assert metrics["a finite transfer beside bulk TCP"]["completion_s"] == transfer["completion_s"]


def test_a_need_is_met_by_any_one_scenario_of_several() -> None:
    tcp, blocks = SCENARIOS["one TCP flow"], SCENARIOS["MPTCP writing blocks"]
    assert unmet_need("block_latency_p95_ms", [tcp, blocks], "them") is None
    assert unmet_need("block_latency_p95_ms", [tcp, tcp], "the campaign's scenarios") == (
        "metric 'block_latency_p95_ms' needs a flow writing blocks "
        '(app = { kind = "blocks" }), which none of the campaign\'s scenarios has'
    )
    assert unmet_need("goodput_mbps", [], "them") is None  # no needs
