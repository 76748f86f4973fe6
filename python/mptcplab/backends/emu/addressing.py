"""Who lives where in an emulated network: namespaces, interfaces, addresses and routes.

Each flow entry of the scenario (a *group*: one flow or ``count`` identical flows) gets its own
client namespace, with one interface per path, and its own server namespace with one
interface, so that per-namespace settings (buffer caps, MPTCP limits, ACK policy) follow that
flow's spec. The client sends; a packet from path ``p``'s address to the server crosses the
links of path ``p`` forward, and the ACKs come back over the same links in reverse.

Addresses come from 198.18.0.0/15 (RFC 2544, reserved for benchmarking): group ``g``'s path
``p`` is 198.18.0.0 + 16·g + p + 1 and its server 198.19.0.0 + 16·g + 1, so at most 4096
groups of at most 15 paths. Nothing here touches the system.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from mptcplab.scenario.model import FlowSpec, Scenario

NS_PREFIX = "mptcplab-"
#: Namespaces this backend creates: ``mptcplab-<run id>-c<g>`` / ``-s<g>``.
NS_PATTERN = re.compile(r"^mptcplab-([0-9a-f]{8})-[cs][0-9]+$")
CLIENT_BASE = int(ipaddress.IPv4Address("198.18.0.0"))
SERVER_BASE = int(ipaddress.IPv4Address("198.19.0.0"))
MAX_GROUPS = 4096
MAX_PATHS = 15
SERVER_PORT = 5201
#: Policy-routing tables of the client's paths: path p uses table TABLE_BASE + p.
TABLE_BASE = 100


def _addr(value: int) -> str:
    return str(ipaddress.IPv4Address(value))


def client_address(group: int, path: int) -> str:
    return _addr(CLIENT_BASE + 16 * group + path + 1)


def server_address(group: int) -> str:
    return _addr(SERVER_BASE + 16 * group + 1)


def namespace_prefix(run_id: str) -> str:
    return f"{NS_PREFIX}{run_id}-"


@dataclass(frozen=True)
class Interface:
    namespace: str
    name: str
    address: str


@dataclass(frozen=True)
class Group:
    """One scenario flow entry and the two hosts it runs between."""

    index: int
    flow: FlowSpec
    client_ns: str
    server_ns: str
    #: One per path, in path order.
    client_ifaces: tuple[Interface, ...]
    server_iface: Interface

    @property
    def server_endpoint(self) -> str:
        return f"{self.server_iface.address}:{SERVER_PORT}"

    def path_of_address(self, address: str) -> int | None:
        """Index of the path whose client interface has ``address``."""
        for p, iface in enumerate(self.client_ifaces):
            if iface.address == address:
                return p
        return None


@dataclass(frozen=True)
class Plan:
    run_id: str
    groups: tuple[Group, ...]

    @property
    def namespaces(self) -> list[str]:
        out: list[str] = []
        for g in self.groups:
            out += [g.client_ns, g.server_ns]
        return out

    def interfaces(self) -> list[Interface]:
        out: list[Interface] = []
        for g in self.groups:
            out += [*g.client_ifaces, g.server_iface]
        return out

    def linkem_routes(self) -> list[dict[str, object]]:
        """Every (source, destination) pair linkem forwards, with its link directions."""
        routes: list[dict[str, object]] = []
        for g in self.groups:
            server = g.server_iface.address
            for iface, path in zip(g.client_ifaces, g.flow.paths, strict=True):
                routes.append(
                    {
                        "src": iface.address,
                        "dst": server,
                        "hops": [{"link": link, "direction": "forward"} for link in path],
                    }
                )
                routes.append(
                    {
                        "src": server,
                        "dst": iface.address,
                        "hops": [{"link": link, "direction": "reverse"} for link in reversed(path)],
                    }
                )
        return routes


def plan(scenario: Scenario, run_id: str) -> Plan:
    """Lay out the hosts of ``scenario`` for run ``run_id`` (8 hexadecimal characters)."""
    if not re.fullmatch(r"[0-9a-f]{8}", run_id):
        raise ValueError(f"run id must be 8 hexadecimal characters, got {run_id!r}")
    if len(scenario.flows) > MAX_GROUPS:
        raise ValueError(f"at most {MAX_GROUPS} flow entries")
    prefix = namespace_prefix(run_id)
    groups = []
    for g, flow in enumerate(scenario.flows):
        if len(flow.paths) > MAX_PATHS:
            raise ValueError(f"flows[{g}].paths: at most {MAX_PATHS} paths")
        client_ns = f"{prefix}c{g}"
        server_ns = f"{prefix}s{g}"
        groups.append(
            Group(
                index=g,
                flow=flow,
                client_ns=client_ns,
                server_ns=server_ns,
                client_ifaces=tuple(
                    Interface(client_ns, f"p{p}", client_address(g, p))
                    for p in range(len(flow.paths))
                ),
                server_iface=Interface(server_ns, "s0", server_address(g)),
            )
        )
    return Plan(run_id=run_id, groups=tuple(groups))


def run_id_of_namespace(name: str) -> str | None:
    """The run id in a namespace name this backend created, or None for any other name."""
    m = NS_PATTERN.match(name)
    return m.group(1) if m else None
