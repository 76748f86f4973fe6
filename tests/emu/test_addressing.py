"""The layout of hosts, addresses and routes of an emulated network (no system access)."""

from __future__ import annotations

import ipaddress

import pytest

from mptcplab.backends.emu import addressing
from mptcplab.scenario.model import Scenario


def scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "duration_s": 1,
            "links": [
                {"id": "wifi", "capacity_mbps": 8, "delay_ms": 10},
                {"id": "3g", "capacity_mbps": 2, "delay_ms": 75},
                {"id": "core", "capacity_mbps": 100, "delay_ms": 5},
            ],
            "flows": [
                {
                    "id": "phone",
                    "protocol": "mptcp",
                    "scheduler": "linger",
                    "paths": [["wifi", "core"], ["3g", "core"]],
                },
                {"id": "pc", "protocol": "tcp", "paths": [["core"]], "count": 3},
            ],
        }
    )


def test_every_interface_has_its_own_address_in_the_benchmarking_range() -> None:
    plan = addressing.plan(scenario(), "0123abcd")
    addrs = [i.address for i in plan.interfaces()]
    assert len(addrs) == len(set(addrs)) == 2 + 1 + 1 + 1
    bench = ipaddress.ip_network("198.18.0.0/15")
    assert all(ipaddress.ip_address(a) in bench for a in addrs)


def test_each_flow_entry_gets_a_client_and_a_server_namespace() -> None:
    plan = addressing.plan(scenario(), "0123abcd")
    assert plan.namespaces == [
        "mptcplab-0123abcd-c0",
        "mptcplab-0123abcd-s0",
        "mptcplab-0123abcd-c1",
        "mptcplab-0123abcd-s1",
    ]
    assert all(addressing.run_id_of_namespace(n) == "0123abcd" for n in plan.namespaces)
    assert addressing.run_id_of_namespace("mptcplab-doctor-12") is None
    assert addressing.run_id_of_namespace("other-0123abcd-c0") is None


def test_routes_cross_the_path_forward_and_come_back_reversed() -> None:
    plan = addressing.plan(scenario(), "0123abcd")
    phone = plan.groups[0]
    routes = {(r["src"], r["dst"]): r["hops"] for r in plan.linkem_routes()}
    second = phone.client_ifaces[1].address
    server = phone.server_iface.address
    assert routes[(second, server)] == [
        {"link": "3g", "direction": "forward"},
        {"link": "core", "direction": "forward"},
    ]
    assert routes[(server, second)] == [
        {"link": "core", "direction": "reverse"},
        {"link": "3g", "direction": "reverse"},
    ]
    # One route per direction per path: 2 paths + 1 path.
    assert len(routes) == 2 * 3
    assert phone.path_of_address(second) == 1


def test_bad_run_ids_are_refused() -> None:
    with pytest.raises(ValueError):
        addressing.plan(scenario(), "../etc")
