#!/usr/bin/env python3
"""The NSDI 2012 receive-buffer experiment on the real kernel and on the simulator.

    .venv/bin/python scripts/emu_rcvbuf_sweep.py [--kib 32,64,256,1024] [--duration 30]

WiFi 8 Mbit/s·20 ms RTT + 3G 2 Mbit/s·150 ms RTT (template ``wifi_3g``, spec §5.6), blocks of
8 KiB through a 200 KiB send buffer, a fixed receive buffer of each size. Per size, goodput in
Mbit/s of: TCP over WiFi alone, MPTCP with the kernel's scheduler (linger, no opportunistic
retransmission or penalisation, which the kernel lacks) on the emulator and on the simulator,
and MPTCP on the simulator with the out-of-tree minRTT scheduler and M1+M2 (the paper's fix).
Emulator runs go one after the other; a run whose emulation was the bottleneck is marked "!".
Needs root for the emulator. Prints one markdown table.
"""

from __future__ import annotations

import argparse
from typing import Any

from mptcplab import emu, sim
from mptcplab.scenario.templates import make


def _emu_goodput(scenario: Any) -> str:
    report = emu.run(scenario)
    flagged = report.get("fidelity", {}).get("emulation_bottleneck", False)
    return f"{report['flows'][0]['goodput_mbps']:.2f}" + (" !" if flagged else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kib", default="32,64,256,1024", help="receive buffers, KiB")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--cc", default="lia", help="MPTCP congestion control (default lia)")
    args = parser.parse_args()
    sizes = [int(k) for k in args.kib.split(",")]
    common = {"duration_s": args.duration, "trace": []}
    kernel_like = {
        "scheduler": "linger",
        "penalization": "off",
        "opportunistic_retransmit": False,
        "cc": args.cc,
    }
    print(f"WiFi/3G, {args.duration:g} s, MPTCP cc {args.cc}; goodput Mbit/s")
    print()
    print(
        "| rcvbuf KiB | TCP/WiFi emu | TCP/WiFi sim | MPTCP linger emu | MPTCP linger sim "
        "| MPTCP minRTT+M1+M2 sim |"
    )
    print("|---|---|---|---|---|---|")
    for kib in sizes:
        rcvbuf = kib * 1024
        tcp = make("wifi_3g", path="wifi", rcvbuf_bytes=rcvbuf, **common)
        linger = make("wifi_3g", rcvbuf_bytes=rcvbuf, **kernel_like, **common)
        fixed = make("wifi_3g", rcvbuf_bytes=rcvbuf, cc=args.cc, **common)
        cells = [
            _emu_goodput(tcp),
            f"{sim.run(tcp).flows[0].goodput_mbps:.2f}",
            _emu_goodput(linger),
            f"{sim.run(linger).flows[0].goodput_mbps:.2f}",
            f"{sim.run(fixed).flows[0].goodput_mbps:.2f}",
        ]
        print(f"| {kib} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
