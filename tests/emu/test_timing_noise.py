"""Point 17 of ``crossval.toml``, where a noise-free simulator once locked into a loss pattern
the kernel never shows: on both backends, with and without timing noise, the slow path's losses
are recovered without a string of timeouts.

An MPTCP connection on the kernel's scheduler over a 3.84 Mbit/s path (11.6 ms RTT, 13-packet
queue) and a 1.27 Mbit/s path (37.6 ms, 3-packet queue). The kernel recovers every loss on the
slow path by fast retransmit: no timeout in 20 s (its TCPTimeouts and TCPLossProbes counters
both 0). The simulator without jitter used to be exactly periodic: the slow subflow's 3-packet
queue dropped the last segment of a burst the same way every 3.6 s, nothing sent after it
revealed the loss, and the subflow waited for its retransmission timer while the connection's
DATA_ACK waited for that segment (7 timeouts in 10 s, 0.74x the kernel's goodput over 20 s);
a link jitter of 0.05 ms freed 8 of seeds 1-10 from it. That was while the simulator dropped
the data a subflow had been handed once a DATA_ACK covered it; the kernel's subflow sends it
(``test_stale_copies.py``), and with it the noise-free run has 2 timeouts in 10 s and is within
1 % of the kernel's goodput, the runs with jitter 0-2 (measured 2026-11-27).
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest
from emu_helpers import fast_slow_flow, link, report_data

from mptcplab import emu, sim

pytestmark = [pytest.mark.root, pytest.mark.usefixtures("emulator")]


def _scenario(jitter_ms: float, seed: int = 1) -> dict[str, Any]:
    return {
        "duration_s": 10.0,
        "warmup_s": 2.0,
        "seed": seed,
        "links": [
            link(
                "fast", 3.836, 5.786, queue={"kind": "droptail", "packets": 13}, jitter_ms=jitter_ms
            ),
            link(
                "slow", 1.273, 18.801, queue={"kind": "droptail", "packets": 3}, jitter_ms=jitter_ms
            ),
        ],
        "flows": [fast_slow_flow()],
    }


def _outcome(report: Any) -> tuple[float, int]:
    """Goodput (Mbit/s) and retransmission timeouts summed over the subflows."""
    flow = report_data(report)["flows"][0]
    return flow["goodput_mbps"], sum(sf["timeouts"] for sf in flow["subflows"])


def test_the_slow_paths_losses_end_in_few_timeouts_with_or_without_noise() -> None:
    kernel_goodput, kernel_timeouts = _outcome(emu.run(_scenario(0.05)))
    assert kernel_timeouts <= 1, kernel_timeouts

    # Without noise every seed gives the same run; the lock gave 7 timeouts and 0.74x.
    quiet_goodput, quiet_timeouts = _outcome(sim.run(_scenario(0.0)))
    assert quiet_timeouts <= 3, quiet_timeouts
    assert quiet_goodput == pytest.approx(kernel_goodput, rel=0.15), (quiet_goodput, kernel_goodput)

    runs = [_outcome(sim.run(_scenario(0.05, seed))) for seed in range(1, 11)]
    assert max(timeouts for _, timeouts in runs) <= 3, runs
    goodput = statistics.median(g for g, _ in runs)
    assert goodput == pytest.approx(kernel_goodput, rel=0.15), (goodput, kernel_goodput)
