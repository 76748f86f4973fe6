"""A scenario's buffer sizes mean payload room on both backends: a fixed receive buffer and
the cap of an auto-tuned one of the same size give the same window on the kernel, as they do
in the simulator, and that window is the scenario's. (The kernel counts memory and advertises
160/256 of it on the emulator's links, a 1448-byte segment being charged 2304 bytes; it doubles
a fixed SO_RCVBUF. An auto-tuning cap given to it as tcp_rmem unchanged allowed under two
thirds of the window; memory of twice the window, 1.25 times the window.)

One window-limited TCP flow: 64 KiB of window over a 100 ms round trip carries about 5 Mbit/s
of a 10 Mbit/s link, so the window, not the link or the emulator's timing, sets the rate.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from emu_helpers import link, tcp_flow

from mptcplab import emu

pytestmark = [pytest.mark.root, pytest.mark.usefixtures("emulator")]

BUFFER = 64 * 1024


def _scenario(**buffer: Any) -> dict[str, Any]:
    return {
        "duration_s": 8,
        "warmup_s": 3,
        "seed": 1,
        "links": [link("path", 10.0, 50.0, queue={"kind": "droptail", "ms": 100})],
        "flows": [tcp_flow("f", ["path"], **buffer)],
    }


def test_an_auto_tuning_cap_gives_the_window_of_a_fixed_buffer_of_that_size() -> None:
    scenarios = [_scenario(rcvbuf_bytes=BUFFER), _scenario(rcvbuf="auto", rcvbuf_max_bytes=BUFFER)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        fixed, auto = (r["flows"][0] for r in pool.map(emu.run, scenarios))
    window_rate_mbps = BUFFER * 8 / 0.1 / 1e6  # 5.24
    assert fixed["goodput_mbps"] == pytest.approx(window_rate_mbps, rel=0.1), fixed
    assert auto["goodput_mbps"] == pytest.approx(fixed["goodput_mbps"], rel=0.15), (auto, fixed)
    assert 0.9 * BUFFER <= auto["final_rcvbuf_bytes"] <= BUFFER, auto
