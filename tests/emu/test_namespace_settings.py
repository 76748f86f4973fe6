"""The kernel settings each host's namespace gets from its flow entry, captured instead of
applied (no system access): a setting of the scenario that the kernel holds per namespace must
reach both of the flow's hosts."""

from __future__ import annotations

import pytest

from mptcplab.backends.emu import addressing, netns
from mptcplab.scenario.model import Scenario


def _settings(monkeypatch: pytest.MonkeyPatch, tcp: dict[str, object]) -> dict[str, dict]:
    scenario = Scenario.model_validate(
        {
            "duration_s": 1,
            "links": [{"id": "l", "capacity_mbps": 8, "delay_ms": 10}],
            "flows": [{"id": "f", "protocol": "tcp", "paths": [["l"]], "tcp": tcp}],
        }
    )
    (group,) = addressing.plan(scenario, "0123abcd").groups
    written: dict[str, dict] = {}
    monkeypatch.setattr(netns, "batch", lambda namespace, cmds: None)
    monkeypatch.setattr(netns, "sysctl", lambda namespace, s: written.setdefault(namespace, s))
    netns.configure_client(group, sndbuf_cap=4 << 20)
    netns.configure_server(group, rcvbuf_cap=4 << 20, autotune=True)
    assert set(written) == {group.client_ns, group.server_ns}
    return written


@pytest.mark.parametrize("sack", [True, False])
def test_both_hosts_take_sack_as_the_scenario_has_it(monkeypatch, sack: bool) -> None:
    """net.ipv4.tcp_sack (ip-sysctl: "Enable select acknowledgments (SACKS)") is per
    namespace; without it the kernel recovers by NewReno, as the simulator does with
    sack = false. Either end can refuse the option, and both are told."""
    for settings in _settings(monkeypatch, {"sack": sack}).values():
        assert settings["net.ipv4.tcp_sack"] == ("1" if sack else "0")
