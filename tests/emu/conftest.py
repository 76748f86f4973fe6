"""Fixtures of the emulator tests. Tests that run the kernel skip, with the reason, when this
machine cannot (not root, no TUN, no namespaces, MPTCP off, programs not built); on a capable
machine they run for real."""

from __future__ import annotations

import pytest

from mptcplab import emu


@pytest.fixture(scope="session")
def emulator() -> None:
    ok, reason = emu.available()
    if not ok:
        pytest.skip(f"emulator unavailable: {reason}")


def link(link_id: str, mbps: float, delay_ms: float, **extra: object) -> dict[str, object]:
    return {"id": link_id, "capacity_mbps": mbps, "delay_ms": delay_ms, **extra}


def tcp_flow(flow_id: str, path: list[str], **extra: object) -> dict[str, object]:
    return {"id": flow_id, "protocol": "tcp", "cc": "cubic", "paths": [path], **extra}
