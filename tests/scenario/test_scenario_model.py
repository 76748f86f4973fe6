"""The scenario model enforces the rules of crates/mpsim/src/scenario.rs (``Scenario::validate``
and the serde types), with the same field paths and messages."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError
from scenario_cases import GOOD, SEMANTIC, STRUCTURAL, Bad, scenario

from mptcplab.scenario.model import (
    BlocksApp,
    DropTailQueue,
    FlowSpec,
    LinkSpec,
    Scenario,
    issues,
)

ROOT = Path(__file__).resolve().parents[2]


def _first_issue(data: dict) -> tuple[str, str]:
    with pytest.raises(ValidationError) as info:
        Scenario.model_validate(data)
    found = issues(info.value)
    return found[0].field, found[0].message


@pytest.mark.parametrize("case", SEMANTIC, ids=lambda c: c.name)
def test_validate_rules(case: Bad) -> None:
    field, message = _first_issue(scenario(case.mutate))
    assert (field, message) == (case.field, case.message)


@pytest.mark.parametrize("case", STRUCTURAL, ids=lambda c: c.name)
def test_type_rules(case: Bad) -> None:
    field, message = _first_issue(scenario(case.mutate))
    assert field == case.field
    assert message.startswith(("expected", "unknown", "missing")), message


@pytest.mark.parametrize("name,mutate", GOOD, ids=[g[0] for g in GOOD])
def test_accepted(name: str, mutate) -> None:
    s = Scenario.model_validate(scenario(mutate))
    # What goes to the simulator reads back as the same scenario.
    assert Scenario.model_validate(json.loads(s.to_json())) == s


def test_default_scenario_loads_exactly_as_written() -> None:
    path = ROOT / "scenarios" / "default.toml"
    raw = tomllib.loads(path.read_text())
    s = Scenario.model_validate(raw)
    assert s.duration_s == raw["duration_s"] == 30.0
    assert s.seed == raw["seed"] == 7
    (link,) = s.links
    assert (link.id, link.capacity_mbps, link.delay_ms, link.loss) == ("wifi", 8.0, 10.0, 0.0)
    assert link.queue == DropTailQueue(ms=80)
    (flow,) = s.flows
    assert (flow.id, flow.protocol, flow.cc, flow.paths) == ("laptop", "tcp", "reno", [["wifi"]])
    assert flow.rcvbuf_bytes == 4194304 and flow.count == 1 and flow.app.kind == "bulk"
    assert flow.rcvbuf_mode() == "fixed"


def test_to_json_leaves_absent_options_to_the_simulator() -> None:
    s = Scenario.model_validate(scenario())
    data = json.loads(s.to_json())
    link = data["links"][0]
    flow = data["flows"][0]
    for absent in ("queue", "reverse_capacity_mbps", "reverse_queue"):
        assert absent not in link
    for absent in ("cc", "rcvbuf", "rcvbuf_bytes", "penalization", "opportunistic_retransmit"):
        assert absent not in flow
    assert flow["app"] == {"kind": "bulk"}
    assert "null" not in s.to_json()


def test_to_json_refuses_non_finite_numbers() -> None:
    # Checks reject NaN everywhere a number is read, so nothing non-finite reaches JSON.
    for value in (math.nan, math.inf):
        with pytest.raises(ValidationError):
            LinkSpec(id="a", capacity_mbps=value, delay_ms=1)
        with pytest.raises(ValidationError):
            LinkSpec(id="a", capacity_mbps=1, delay_ms=1, loss=value)


def test_effective_defaults_follow_the_rust_helpers() -> None:
    tcp = FlowSpec(id="t", protocol="tcp", paths=[["a"]], penalization="nsdi12")
    mptcp = FlowSpec(id="m", protocol="mptcp", paths=[["a"]])
    assert tcp.cc_kind() == "reno" and mptcp.cc_kind() == "lia"
    assert tcp.penalization_mode() == "off" and mptcp.penalization_mode() == "conext13"
    assert not tcp.opportunistic_retransmit_enabled()
    assert mptcp.opportunistic_retransmit_enabled()
    assert mptcp.rcvbuf_mode() == "auto"
    assert FlowSpec(id="c", protocol="tcp", paths=[["a"]], count=3).flow_ids() == [
        "c#0",
        "c#1",
        "c#2",
    ]


def test_python_construction_accepts_tuples() -> None:
    f = FlowSpec(id="t", protocol="mptcp", paths=(("a",), ("b", "c")), app=BlocksApp())
    assert f.paths == [["a"], ["b", "c"]]


def test_unknown_field_message_lists_the_allowed_ones_and_suggests() -> None:
    _, message = _first_issue(scenario(lambda d: d["links"][0].update(capcity_mbps=1)))
    assert "unknown field 'capcity_mbps'" in message
    assert "did you mean 'capacity_mbps'?" in message
    for allowed in ("id", "capacity_mbps", "delay_ms", "queue", "loss", "jitter_ms"):
        assert allowed in message
    _, message = _first_issue(
        scenario(
            lambda d: d["links"][0].update(
                queue={
                    "kind": "red",
                    "min_packets": 1,
                    "max_packets": 2,
                    "max_p": 0.1,
                    "limit_packets": 4,
                    "wieght": 0.1,
                }
            )
        )
    )
    assert "did you mean 'weight'?" in message and "min_packets" in message


def test_misspelt_key_reports_the_typo_before_the_missing_key() -> None:
    def typo(d: dict) -> None:
        d["links"][0]["capcity_mbps"] = d["links"][0].pop("capacity_mbps")

    field, message = _first_issue(scenario(typo))
    assert field == "links[0].capcity_mbps" and "did you mean 'capacity_mbps'" in message


def test_messages_for_enums_and_types() -> None:
    assert _first_issue(scenario(lambda d: d["flows"][0].update(cc="vegas")))[1] == (
        "expected one of 'reno', 'cubic', 'lia', 'olia' or 'balia', got \"vegas\""
    )
    assert _first_issue(scenario(lambda d: d["flows"][0].update(rcvbuf_bytes=4e6)))[1] == (
        "expected an integer, got 4000000.0"
    )
    message = _first_issue(scenario(lambda d: d["links"][0].update(queue={"kind": "fifo"})))[1]
    assert message == "unknown kind \"fifo\"; expected one of 'droptail', 'red'"
    message = _first_issue(scenario(lambda d: d["links"][0].update(queue={"ms": 3})))[1]
    assert "'droptail', 'red'" in message
    message = _first_issue(scenario(lambda d: d["links"][0].pop("delay_ms")))[1]
    assert message.startswith("missing field 'delay_ms': One-way propagation delay")
    # JSON's null by its own name, not Python's; a number of hundreds of digits by its first
    # few and its size.
    message = _first_issue(scenario(lambda d: d["links"][0].update(capacity_mbps=None)))[1]
    assert message == "expected a number, got null"
    message = _first_issue(scenario(lambda d: d["flows"][0].update(tcp=None)))[1]
    assert message == "expected a table, got null"
    message = _first_issue(scenario(lambda d: d["links"][0].update(capacity_mbps=10**400)))[1]
    assert message == "expected a number, got 1e400"
    message = _first_issue(scenario(lambda d: d["links"][0].update(id=-123456789 * 10**30)))[1]
    assert message == "expected a string, got -1.23456789e38"
