"""Copies of a flow entry (``count > 1``) start at the same moments on both backends. The
simulator spreads them over 100 ms by a seeded draw, so that identical users do not move in
lock-step; the emulator started every copy at the entry's ``start_s``, all slow starts
together, which changes losses, fairness and completion times between the backends."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from emu_helpers import link, tcp_flow

from mptcplab import sim
from mptcplab.backends.emu import addressing, traffic
from mptcplab.scenario.model import Scenario

ONE_WAY_S = 0.010


def _scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "duration_s": 2.0,
            "seed": 4,
            "trace": ["cwnd"],
            "trace_interval_ms": 1.0,
            "links": [link("l", 20.0, ONE_WAY_S * 1000)],
            "flows": [tcp_flow("u", ["l"], count=4, start_s=0.5, stop_s=1.5)],
        }
    )


def test_the_simulator_starts_each_copy_when_copy_start_ns_says() -> None:
    """Independent of how the offsets are drawn: each copy's window first shows one round trip
    (its handshake) after the start given for it, to the trace's millisecond."""
    sc = _scenario()
    starts = sim.copy_start_ns(sc)[0]
    assert len(set(starts)) == 4 and all(0.5e9 <= s <= 0.6e9 for s in starts)
    traces = sim.run(sc).traces
    assert traces is not None
    for k, start_ns in enumerate(starts):
        series = next(s.values for s in traces.cwnd if s.name == f"u#{k}/0")
        first = next(t for t, w in zip(traces.time_s, series, strict=True) if w > 0)
        assert start_ns / 1e9 + 2 * ONE_WAY_S <= first <= start_ns / 1e9 + 2 * ONE_WAY_S + 0.0011


def test_the_emulator_starts_each_copy_then_and_keeps_the_entrys_lifetime() -> None:
    sc = _scenario()
    group = addressing.plan(sc, "0123abcd").groups[0]
    starts_ns = sim.copy_start_ns(sc)[0]
    rundir = SimpleNamespace(path=Path("/nonexistent"))
    config = traffic.client_config(sc, group, rundir, starts_ns)  # type: ignore[arg-type]
    starts = [ns / 1e9 for ns in starts_ns]
    assert [f["start_s"] for f in config["flows"]] == pytest.approx(starts, abs=1e-9)
    assert [f["stop_s"] - f["start_s"] for f in config["flows"]] == pytest.approx([1.0] * 4)
