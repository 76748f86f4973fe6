"""CUBIC after HyStart ends slow start without a loss: on both backends the window keeps
growing by about 5 % per RTT, Linux's rule while no loss has given CUBIC a W_max
(``bictcp_update``: ``cnt`` at most 20 while ``last_max_cwnd == 0``).

One TCP connection over 97.9 Mbit/s, 6.3 ms RTT and a 458-packet queue (the fast path of point
22 of ``crossval.toml`` widened to the CoNEXT 2013 ranges). HyStart's ACK train ends slow start
at about 70 segments within 0.1 s; the queue then fills at 5 % of the window per RTT, which,
with the RTT growing with the window, is about 400 segments a second: the kernel's window was 464
at 1 s in a traced run (the simulator's 466). The simulator runs it with ``cubic_variant =
"linux"`` (``kernel_tcp``); RFC 9438's congestion avoidance, from K = 0 and W_max = cwnd, adds one
segment per RTT (the Reno-friendly estimate) and had 144 segments at 1 s.

The kernel's exit is the fragile part: its ACK train is timed to the microsecond, and in 4 of
29 runs it ended early (at 30 and 34 segments in the two of them printed, once with the link
emulator reporting releases held back by the host), from which the window grew 11-13-fold, to
397 and 421 by 1 s; the other runs exited at 63-72 and grew 6.5-7.2-fold to 456-466. So the
backends are held to the same window at 1 s, not to the same growth factor.
"""

from __future__ import annotations

from typing import Any

import pytest
from emu_helpers import kernel_tcp, link, report_data, tcp_flow

from mptcplab import emu, sim

pytestmark = [pytest.mark.root, pytest.mark.usefixtures("emulator")]

SCENARIO: dict[str, Any] = {
    "duration_s": 1.2,
    "warmup_s": 0.0,
    "seed": 1,
    "links": [link("fast", 97.896, 3.144, queue={"kind": "droptail", "packets": 458})],
    "flows": [tcp_flow("f", ["fast"], tcp=kernel_tcp())],
    "trace": ["cwnd", "ssthresh"],
    "trace_interval_ms": 20.0,
}


def _windows(report: Any) -> tuple[float, float]:
    """HyStart's exit window (the first finite ssthresh) and the window at 1 s, in segments."""
    traces = report_data(report)["traces"]
    times = traces["time_s"]
    cwnd = traces["cwnd"][0]["values"]
    ssthresh = [s for s in traces["ssthresh"][0]["values"] if s and s < 1e9]
    at_one = min(range(len(times)), key=lambda i: abs(times[i] - 1.0))
    return ssthresh[0] / 1448, cwnd[at_one] / 1448


def test_cubic_keeps_probing_after_hystart_on_both_backends() -> None:
    kernel_exit, kernel_cwnd = _windows(emu.run(SCENARIO))
    sim_exit, sim_cwnd = _windows(sim.run(SCENARIO))
    # HyStart stopped slow start near the path's BDP plus a little queue, long before the
    # 458-packet queue was full. (The kernel's exit depends on its ACK train's timing: 70-71
    # segments in most runs, the simulator's 71, but 103 in one run of the full suite.)
    for exit_window in (kernel_exit, sim_exit):
        assert 16 <= exit_window <= 150, (sim_exit, kernel_exit)
    # Then 5 % per RTT: several times the exit window within a second, on both backends (RFC
    # 9438's one segment per RTT gave the simulator 2.0 times), to the same window (465 and 466
    # in traced runs; RFC 9438's gave 144).
    assert kernel_cwnd >= 4 * kernel_exit, (kernel_cwnd, kernel_exit)
    assert sim_cwnd >= 4 * sim_exit, (sim_cwnd, sim_exit)
    assert sim_cwnd == pytest.approx(kernel_cwnd, rel=0.25), (sim_cwnd, kernel_cwnd)
