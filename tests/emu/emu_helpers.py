"""Scenario pieces shared by the emulator tests."""

from __future__ import annotations

from typing import Any

from mptcplab.results import Report


def link(link_id: str, mbps: float, delay_ms: float, **extra: object) -> dict[str, object]:
    return {"id": link_id, "capacity_mbps": mbps, "delay_ms": delay_ms, **extra}


def tcp_flow(flow_id: str, path: list[str], **extra: object) -> dict[str, object]:
    return {"id": flow_id, "protocol": "tcp", "cc": "cubic", "paths": [path], **extra}


def mptcp_flow(flow_id: str, paths: list[list[str]], **extra: object) -> dict[str, object]:
    """An MPTCP connection on the kernel's scheduler, one subflow per path."""
    return {
        "id": flow_id,
        "protocol": "mptcp",
        "cc": "cubic",
        "scheduler": "linger",
        "paths": paths,
        **extra,
    }


def kernel_tcp(**extra: object) -> dict[str, object]:
    """The simulator's TCP options that do what today's kernel does, as the cross-validation
    campaigns set them: RACK, window use measured per round, PRR, restart after idle, Linux's
    CUBIC congestion avoidance, Linux 6.16's receive-buffer auto-tuning."""
    return {
        "loss_detection": "rack",
        "cwnd_limited_check": "per_round",
        "prr": True,
        "slow_start_after_idle": True,
        "cubic_variant": "linux",
        "drs_variant": "linux",
        **extra,
    }


def fast_slow_flow(*, slow_first: bool = False, **tcp: object) -> dict[str, object]:
    """The cross-validation campaigns' connection over links ``fast`` and ``slow`` (its first
    subflow on ``fast`` unless ``slow_first``): the kernel's scheduler, neither penalization nor
    opportunistic retransmission (the kernel has neither), the TCP options of
    :func:`kernel_tcp` with ``tcp`` on top."""
    paths = [["fast"], ["slow"]]
    return mptcp_flow(
        "f",
        paths[::-1] if slow_first else paths,
        penalization="off",
        opportunistic_retransmit=False,
        tcp=kernel_tcp(**tcp),
    )


def report_data(report: Report | dict[str, Any]) -> dict[str, Any]:
    """A run's report as plain data: ``emu.run`` returns it so, ``sim.run`` as a Report."""
    return report if isinstance(report, dict) else report.to_dict()
