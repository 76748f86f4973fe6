#!/usr/bin/env python3
"""draft-khalili Scenario C on the real kernel and on the simulator: LIA against OLIA.

    .venv/bin/python scripts/emu_scenario_c.py [--n1 10] [--duration 60] [--warmup 10]

N1 multipath users over AP1 (N1 Mbit/s) and AP2 (N2 = 10 Mbit/s), ten single-path TCP Reno
users on AP2 only, RED queues, 150 ms propagation RTT (template ``two_ap``, spec §5.4). The
kernel runs LIA and OLIA as BPF struct_ops with its own scheduler, so every run here uses the
linger scheduler without opportunistic retransmission or penalisation, on both backends. Prints
per-class mean goodput (Mbit/s) beside the draft's measurements. Needs root for the emulator.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from mptcplab import emu, sim
from mptcplab.scenario.templates import make

# draft-khalili-mptcp-performance-issues-06, Scenario C, measured (multipath, single-path).
DRAFT = {
    (10, "lia"): (1.30, 0.68),
    (10, "olia"): (1.11, 0.88),
    (30, "lia"): (1.19, 0.38),
    (30, "olia"): (1.10, 0.72),
}


def _scenario(n1: int, cc: str, duration_s: float, warmup_s: float) -> dict[str, Any]:
    data = make("two_ap", n1=n1, cc=cc, duration_s=duration_s, warmup_s=warmup_s).to_dict()
    for flow in data["flows"]:
        if flow["protocol"] == "mptcp":
            flow.update(scheduler="linger", penalization="off", opportunistic_retransmit=False)
    return data


def _per_class(flows: list[dict[str, Any]]) -> tuple[float, float]:
    def mean(prefix: str) -> float:
        return statistics.mean(f["goodput_mbps"] for f in flows if f["id"].startswith(prefix))

    return mean("multipath"), mean("singlepath")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n1", type=int, default=10)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    args = parser.parse_args()
    print(f"Scenario C, N1 = {args.n1}, N2 = 10, {args.duration:g} s ({args.warmup:g} s warm-up)")
    print()
    print("| cc | emu multipath | emu single-path | sim multipath | sim single-path | draft |")
    print("|---|---|---|---|---|---|")
    for cc in ("lia", "olia"):
        data = _scenario(args.n1, cc, args.duration, args.warmup)
        report = emu.run(data)
        flagged = report.get("fidelity", {}).get("emulation_bottleneck", False)
        emu_mp, emu_sp = _per_class(report["flows"])
        sim_report = sim.run(data).to_dict()
        sim_mp, sim_sp = _per_class(sim_report["flows"])
        mark = " !" if flagged else ""
        print(
            f"| {cc} | {emu_mp:.3f}{mark} | {emu_sp:.3f}{mark} | {sim_mp:.3f} | {sim_sp:.3f} "
            f"| {DRAFT.get((args.n1, cc), '–')} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
