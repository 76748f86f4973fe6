"""Python and the simulator agree on what a valid scenario is: every rule of scenario.rs
rejects the same cases on both sides (with the same field and, for validate() rules, the same
message), the accepted cases pass both, and every template's output is accepted by Rust."""

from __future__ import annotations

import json
from typing import Any

import pytest
from scenario_cases import GOOD, SEMANTIC, STRUCTURAL, Bad, scenario

from mptcplab.scenario import templates
from mptcplab.scenario.model import Scenario

native = pytest.importorskip("mptcplab._mpsim", reason="the simulator extension is not built")


def _rust_error(data: dict[str, Any]) -> Any:
    with pytest.raises(native.ScenarioError) as info:
        native.validate(json.dumps(data))
    return info.value


@pytest.mark.parametrize("case", SEMANTIC, ids=lambda c: c.name)
def test_validate_rules_agree(case: Bad) -> None:
    err = _rust_error(scenario(case.mutate))
    assert (err.field, err.detail) == (case.field, case.message)


@pytest.mark.parametrize("case", STRUCTURAL, ids=lambda c: c.name)
def test_type_rules_agree(case: Bad) -> None:
    _rust_error(scenario(case.mutate))


@pytest.mark.parametrize("name,mutate", GOOD, ids=[g[0] for g in GOOD])
def test_accepted_by_both(name: str, mutate) -> None:
    data = scenario(mutate)
    native.validate(json.dumps(data))
    native.validate(Scenario.model_validate(data).to_json())


VARIANTS: list[tuple[str, dict[str, Any]]] = [
    *((name, {}) for name in templates.TEMPLATES),
    (
        "two_path",
        {
            "cc": "olia",
            "rcvbuf": 65536,
            "penalization": "off",
            "opportunistic_retransmit": False,
            "scheduler": "roundrobin",
            "capacity_mbps": (0.1, 100),
            "rtt_ms": (0, 400),
            "queuing_delay_ms": (0, 2000),
            "loss": (0.025, 0),
            "app": {"kind": "size", "bytes": 10**6},
        },
    ),
    ("single_path", {"path": 1, "protocol": "mptcp", "app": "blocks"}),
    ("three_bottleneck", {"cc": "reno", "capacity_mbps": (1, 5, 10)}),
    ("shared_ap", {"n1": 30, "multipath": False, "red_instantaneous": True, "cc": "olia"}),
    ("multihomed_isp", {"red_multipath": True, "cc": "balia"}),
    ("two_ap", {"n1": 30, "c1_mbps": 0.1}),
    ("wifi_3g", {"path": "3g"}),
    ("wifi_3g", {"path": "wifi", "protocol": "mptcp", "trace": []}),
    ("wifi_3g", {"penalization": "off", "opportunistic_retransmit": False}),
]


@pytest.mark.parametrize(
    "name,params", VARIANTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(VARIANTS)]
)
def test_templates_are_accepted_by_rust(name: str, params: dict[str, Any]) -> None:
    native.validate(templates.make(name, **params).to_json())
