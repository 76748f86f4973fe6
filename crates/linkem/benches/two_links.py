"""linkem benchmark: saturated 100 Mbit/s links (default two at once, one TCP flow each).

Prints, per link, the rate achieved while busy against the configured rate, the release
lateness (p50 / p99 / max) of data and ACKs, the utilisation, the goodput against the payload
rate, and linkem's CPU per 100 Mbit/s forwarded. Needs what `mptcplab emu` needs (root).

    .venv/bin/python crates/linkem/benches/two_links.py [--duration 20] [--rate 100] [--links 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform

from mptcplab import emu

PAYLOAD = 1448 / 1500


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--rate", type=float, default=100.0, help="Mbit/s of each link")
    ap.add_argument("--delay", type=float, default=10.0, help="one-way delay, ms")
    ap.add_argument("--links", type=int, default=2, help="number of saturated links")
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = ap.parse_args()
    links = [
        {"id": f"l{i}", "capacity_mbps": args.rate, "delay_ms": args.delay}
        for i in range(args.links)
    ]
    flows = [
        {"id": f"f{i}", "protocol": "tcp", "cc": "cubic", "paths": [[f"l{i}"]]}
        for i in range(args.links)
    ]
    report = emu.run({"duration_s": args.duration, "warmup_s": 5.0, "links": links, "flows": flows})
    fid = report["fidelity"]
    total_mbps = sum(f["goodput_mbps"] for f in report["flows"]) / PAYLOAD
    rows = []
    for lk, rep, flow in zip(fid["links"], report["links"], report["flows"], strict=True):
        rows.append(
            {
                "link": lk["id"],
                "configured_mbps": lk["configured_mbps"],
                "achieved_busy_mbps": lk["achieved_busy_mbps"],
                "rate_error_percent": 100 * (lk["rate_ratio"] - 1) if lk["rate_ratio"] else None,
                "utilization": rep["utilization"],
                "goodput_over_payload_rate": flow["goodput_mbps"] / (args.rate * PAYLOAD),
                "lateness_us": lk["lateness_us"],
                "ack_lateness_us": lk["reverse_lateness_us"],
            }
        )
    summary = {
        "machine": f"{platform.node()} {platform.release()}, {os.cpu_count()} cores",
        "duration_s": args.duration,
        "links": rows,
        "linkem_cpu_percent": fid["linkem_cpu_percent"],
        "cpu_percent_per_100_mbps": fid["linkem_cpu_percent"] / (total_mbps / 100),
        "realtime_scheduling": fid["realtime_scheduling"],
        "emulation_bottleneck": fid["emulation_bottleneck"],
        "problems": fid["problems"],
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(
        f"{summary['machine']}; {args.duration:g} s, "
        f"{args.links} × {args.rate:g} Mbit/s, {args.delay:g} ms"
    )
    for r in rows:
        lat, ack = r["lateness_us"], r["ack_lateness_us"]
        print(
            f"{r['link']}: busy rate {r['achieved_busy_mbps']:.3f} Mbit/s "
            f"({r['rate_error_percent']:+.3f}%), utilisation {100 * r['utilization']:.2f}%, "
            f"goodput {100 * r['goodput_over_payload_rate']:.1f}% of payload rate; "
            f"lateness p50/p99/max {lat['p50_us']:.0f}/{lat['p99_us']:.0f}/{lat['max_us']:.0f} µs, "
            f"ACKs {ack['p50_us']:.0f}/{ack['p99_us']:.0f}/{ack['max_us']:.0f} µs"
        )
    print(
        f"linkem CPU {summary['linkem_cpu_percent']:.1f}% of a core, "
        f"{summary['cpu_percent_per_100_mbps']:.1f}% per 100 Mbit/s "
        f"({'real-time' if summary['realtime_scheduling'] else 'ordinary'} scheduling); "
        f"emulation bottleneck: {summary['emulation_bottleneck']} {summary['problems']}"
    )


if __name__ == "__main__":
    main()
