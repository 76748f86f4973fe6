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


def test_a_round_trip_beyond_the_clock_carries_nothing_rather_than_wrapping_to_zero() -> None:
    # One way is within the clock (2^63 ns of its 2^64), there and back is not: the round trip
    # wrapped to nothing, the handshake completed at once and packets flowed.
    scenario = {
        "duration_s": 2.0,
        "links": [{"id": "a", "capacity_mbps": 8.0, "delay_ms": 2**63 / 1e6}],
        "flows": [{"id": "f", "protocol": "tcp", "paths": [["a"]]}],
    }
    report = sim.run(scenario)
    flow = report.flows[0]
    assert flow.bytes_delivered == 0
    assert flow.subflows[0].retransmits == 0
    assert report.links[0].utilization == 0.0


def test_copies_of_a_late_entry_all_start_before_the_end() -> None:
    # Copies start spread over 0.1 s after start_s; 0.05 s before the end, about half of them
    # once started after it and silently carried nothing.
    # A copy that starts sends its initial window at once (its delivery is not the point: ten
    # copies slow-starting into one drop-tail queue may lose a whole initial window).
    scenario = {
        "duration_s": 1.0,
        "links": [{"id": "a", "capacity_mbps": 10_000.0, "delay_ms": 0.05}],
        "flows": [{"id": "f", "protocol": "tcp", "paths": [["a"]], "count": 10, "start_s": 0.95}],
    }
    sent = [f.subflows[0].packets_sent for f in sim.run(scenario).flows]
    assert len(sent) == 10 and min(sent) >= 10, sent
