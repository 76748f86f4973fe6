"""Regressions: scenarios that once stalled or broke the simulator."""

from __future__ import annotations

from mptcplab import sim
from mptcplab.scenario.templates import make


def test_linger_with_sack_does_not_stall() -> None:
    scenario = make(
        "two_path",
        capacity_mbps=(7.115293678067204, 19.09013364342917),
        rtt_ms=(68.24894619174302, 31.989839654415846),
        queuing_delay_ms=(90.44311661273241, 37.88647936657071),
        cc="cubic",
        scheduler="linger",
        penalization="off",
        opportunistic_retransmit=False,
        duration_s=20,
        warmup_s=2,
        seed=9102389590423665508,
    )
    goodput = sim.run(scenario).flows[0].goodput_mbps
    # Oracle: at least 90 % of the payload rate of the faster path alone (1448 B in 1500 B).
    best_single = 19.09013364342917 * 1448 / 1500
    assert goodput > 0.9 * best_single, f"goodput {goodput} Mbit/s on 7 + 19 Mbit/s paths"
