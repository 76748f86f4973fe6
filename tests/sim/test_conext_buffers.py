"""The CoNEXT 2013 queuing-delay factor on the simulator: a full bottleneck buffer makes a packet
wait the delay asked for, even on links so slow that it is only a few packets (spec §4.6)."""

from __future__ import annotations

import pytest

from mptcplab import sim
from mptcplab.scenario.templates import make


@pytest.mark.parametrize(
    ("capacity_mbps", "queuing_delay_ms", "waiting_packets"),
    # 0.5 Mbit/s sends a 1500-byte packet in 24 ms: 96 ms is four packets of waiting room and
    # 30 ms the nearest whole packet, one. A buffer of 30 ms of the link rate (1,875 bytes) that
    # also holds the packet being sent has none: Reno lost every other packet and got 0.10 Mbit/s.
    [(0.5, 96.0, 4), (0.5, 30.0, 1), (2.0, 60.0, 10)],
)
def test_a_full_buffer_holds_the_packet_being_sent_and_the_queuing_delay_behind_it(
    capacity_mbps: float, queuing_delay_ms: float, waiting_packets: int
) -> None:
    scenario = make(
        "single_path",
        capacity_mbps=capacity_mbps,
        rtt_ms=20.0,
        queuing_delay_ms=queuing_delay_ms,
        duration_s=30.0,
    )
    report = sim.run(scenario)
    (link,) = [link for link in report.links if link.id == "path0"]
    # A saturating Reno flow fills the buffer: its peak is the packet on the wire plus the room.
    assert link.max_queue_packets == 1 + waiting_packets
    # Oracle: the link's payload rate (1448 of every 1500 bytes); a buffer that lets Reno keep
    # the link busy through its window halvings gets within a few per cent of it.
    assert report.flows[0].goodput_mbps > 0.9 * capacity_mbps * 1448 / 1500
