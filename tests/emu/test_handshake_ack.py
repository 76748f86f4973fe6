"""The handshake's last ACK on the kernel and in the simulator.

Linux sends the ACK of the SYN/ACK as the SYN/ACK arrives, before the writer's first data, so on
a slow link it is still in the queue when the initial window of 10 segments arrives behind it: a
queue of N packets (the one being sent included) loses max(0, 11 − N) segments in the first
round. The simulator sends that ACK too; both backends must count the same drops. Needs root,
TUN, namespaces and MPTCP (skipped with the reason otherwise).
"""

from __future__ import annotations

import pytest
from emu_helpers import link, mptcp_flow, tcp_flow

from mptcplab import emu, sim

pytestmark = [pytest.mark.root, pytest.mark.usefixtures("emulator")]

INITIAL_WINDOW = 10


@pytest.mark.parametrize(
    ("protocol", "queue_packets"),
    [("tcp", 9), ("tcp", 10), ("tcp", 11), ("mptcp", 10)],
)
def test_the_initial_window_meets_the_handshake_ack_in_the_queue(
    protocol: str, queue_packets: int
) -> None:
    # At 0.3 Mbit/s the ACK takes 1.4 ms to send, far longer than the writer takes to wake (at
    # 1.2 Mbit/s, 0.35 ms, the kernel's TCP writer was first in 2 of 8 runs, MPTCP's in none of
    # 8); with 200 ms round trips the run ends before the second round reaches the queue.
    slow = link("slow", 0.3, 100.0, queue={"kind": "droptail", "packets": queue_packets})
    flow = tcp_flow("f", ["slow"]) if protocol == "tcp" else mptcp_flow("f", [["slow"]])
    scenario = {"duration_s": 0.3, "seed": 1, "links": [slow], "flows": [flow]}
    expected = max(0, INITIAL_WINDOW + 1 - queue_packets)
    kernel = emu.run(scenario)["links"][0]["drops"]
    simulated = sim.run(scenario).to_dict()["links"][0]["drops"]
    assert (kernel, simulated) == (expected, expected)
