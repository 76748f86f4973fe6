"""The traffic of a run: one ``mptcp-traffic server`` in each group's server namespace and one
``mptcp-traffic client`` in its client namespace, all started on the same time zero."""

from __future__ import annotations

import json
from typing import Any

from mptcplab.backends.emu.addressing import SERVER_PORT, Group
from mptcplab.backends.emu.kernel import KERNEL_CC
from mptcplab.backends.emu.netns import fixed_receive_request, fixed_send_request
from mptcplab.backends.emu.programs import Program, require_binary
from mptcplab.backends.emu.rundir import RunDir
from mptcplab.scenario.model import Scenario


def server_config(scenario: Scenario, group: Group, rundir: RunDir) -> dict[str, Any]:
    flow = group.flow
    return {
        "netns": f"/run/netns/{group.server_ns}",
        "listen": f"{group.server_iface.address}:{SERVER_PORT}",
        "transport": flow.protocol,
        "rcvbuf_bytes": (
            fixed_receive_request(flow.rcvbuf_bytes)
            if flow.rcvbuf_mode() == "fixed" and flow.rcvbuf_bytes is not None
            else None
        ),
        "app": flow.app.model_dump(mode="json"),
        "warmup_s": scenario.warmup_s,
        "duration_s": scenario.duration_s,
        "sample_interval_ms": scenario.trace_interval_ms,
        "out": str(rundir.path / f"server-{group.index}.json"),
    }


def client_config(
    scenario: Scenario, group: Group, rundir: RunDir, starts_ns: list[int]
) -> dict[str, Any]:
    """``starts_ns``: when each copy of the group's flow starts (``sim.copy_start_ns``), as the
    simulator starts it; each keeps the entry's lifetime."""
    flow = group.flow
    starts = [ns / 1e9 for ns in starts_ns]
    lifetime = None if flow.stop_s is None else flow.stop_s - flow.start_s
    return {
        "netns": f"/run/netns/{group.client_ns}",
        "server": f"{group.server_iface.address}:{SERVER_PORT}",
        "bind": group.client_ifaces[0].address,
        "transport": flow.protocol,
        "congestion": KERNEL_CC[flow.cc_kind()],
        "sndbuf_bytes": (
            fixed_send_request(flow.sndbuf_bytes) if flow.sndbuf_bytes is not None else None
        ),
        "flows": [
            {
                "index": k,
                "start_s": start_s,
                "stop_s": None if lifetime is None else start_s + lifetime,
            }
            for k, start_s in enumerate(starts)
        ],
        "app": flow.app.model_dump(mode="json"),
        "duration_s": scenario.duration_s,
        "warmup_s": scenario.warmup_s,
        "sample_interval_ms": scenario.trace_interval_ms,
        "out": str(rundir.path / f"client-{group.index}.json"),
    }


def _start(rundir: RunDir, group: Group, role: str, cfg: dict[str, Any]) -> Program:
    name = f"{role}-{group.index}-cfg"
    path = rundir.path / f"{name}.json"
    path.write_text(json.dumps(cfg))
    binary = str(require_binary("mptcp-traffic"))
    label = f"the traffic {role} of flow {group.flow.id}"
    return Program(rundir, name, [binary, role, "--config", str(path)], label)


def start_server(scenario: Scenario, group: Group, rundir: RunDir) -> Program:
    return _start(rundir, group, "server", server_config(scenario, group, rundir))


def start_client(scenario: Scenario, group: Group, rundir: RunDir, starts_ns: list[int]) -> Program:
    return _start(rundir, group, "client", client_config(scenario, group, rundir, starts_ns))
