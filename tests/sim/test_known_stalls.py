"""Known simulator defects, kept as strict expected failures so a fix shows up at once."""

from __future__ import annotations

import pytest

from mptcplab import sim
from mptcplab.scenario.templates import make


@pytest.mark.xfail(
    strict=True,
    reason="known bug: with the linger scheduler and SACK this seed stalls the connection "
    "after ~2 MB (found by campaigns/crossval.toml point 7; minrtt or sack = false do not)",
)
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
    assert goodput > 5.0, f"goodput {goodput} Mbit/s on 7 + 19 Mbit/s paths"
