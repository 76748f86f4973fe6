#!/usr/bin/env python3
"""Run scenario files on the simulator and on the emulator and print them side by side.

    .venv/bin/python scripts/compare_backends.py scenarios/lossy_paths.toml [MORE.toml ...]
        [--cc lia,olia] [--duration 20] [--save DIR]

For each scenario (and each congestion control given with --cc, which replaces the cc of its
MPTCP flows), one markdown section: per flow and per subflow goodput and retransmissions, per
link utilization and drops, and the emulator's fidelity check (a run flagged as
emulation-bottlenecked was shaped by the emulator, not by the network: do not use its figures).
Emulator runs go one after the other (they share the CPU that forwards their packets). Needs
root for the emulator; `mptcplab doctor` says what is missing. Exit code 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mptcplab import emu, sim
from mptcplab.errors import UserError
from mptcplab.scenario.load import load_scenario

Report = dict[str, Any]


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ratio(emu_value: float | None, sim_value: float | None) -> str:
    if emu_value is None or not sim_value:
        return "–"
    return f"{emu_value / sim_value:.2f}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]
    return "\n".join(lines)


def flows_table(s: Report, e: Report) -> str:
    rows = []
    for fs, fe in zip(s["flows"], e["flows"], strict=True):
        rows.append(
            [
                f"**{fs['id']}** ({fs['protocol']}, {fs['cc']})",
                "all",
                _num(fs["goodput_mbps"]),
                _num(fe["goodput_mbps"]),
                _ratio(fe["goodput_mbps"], fs["goodput_mbps"]),
                str(fs["retransmits"]),
                str(fe["retransmits"]),
            ]
        )
        subflows_e = fe.get("subflows") or []
        for i, sub in enumerate(fs.get("subflows") or []):
            other = subflows_e[i] if i < len(subflows_e) else {}
            rows.append(
                [
                    "",
                    f"{sub['index']}: {'→'.join(sub['path'])}",
                    _num(sub["goodput_mbps"]),
                    _num(other.get("goodput_mbps")),
                    _ratio(other.get("goodput_mbps"), sub["goodput_mbps"]),
                    str(sub["retransmits"]),
                    str(other.get("retransmits", "–")),
                ]
            )
    header = ["flow", "subflow", "sim Mbit/s", "emu Mbit/s", "emu/sim", "sim retx", "emu retx"]
    return _table(header, rows)


def links_table(s: Report, e: Report) -> str:
    fidelity = {f["id"]: f for f in e.get("fidelity", {}).get("links", [])}
    rows = []
    for ls, le in zip(s["links"], e["links"], strict=True):
        fid = fidelity.get(ls["id"], {})
        rows.append(
            [
                ls["id"],
                _num(ls["utilization"]),
                _num(le["utilization"]),
                str(ls["drops"]),
                str(le["drops"]),
                _num(fid.get("rate_ratio")),
                "ok" if fid.get("ok") else "NOT OK",
            ]
        )
    header = [
        "link",
        "sim util",
        "emu util",
        "sim drops",
        "emu drops",
        "emu achieved/configured rate",
        "emu link fidelity",
    ]
    return _table(header, rows)


def fidelity_line(e: Report) -> str:
    fid = e.get("fidelity", {})
    flag = "**EMULATION BOTTLENECK: do not use**" if fid.get("emulation_bottleneck") else "ok"
    problems = "; ".join(fid.get("problems") or []) or "none"
    fallbacks = [
        name
        for name, flow in (e.get("backend", {}).get("flows") or {}).items()
        if flow.get("mptcp_fallback") or flow.get("error")
    ]
    return (
        f"Fidelity: {flag}; problems: {problems}; linkem CPU "
        f"{_num(fid.get('linkem_cpu_percent'), 1)} %; TUN drops {fid.get('tun_drops', '–')}; "
        f"flows that fell back to TCP or failed: {', '.join(fallbacks) or 'none'}."
    )


def with_cc(data: dict[str, Any], cc: str | None) -> dict[str, Any]:
    if cc is None:
        return data
    out = json.loads(json.dumps(data))
    for flow in out["flows"]:
        if flow["protocol"] == "mptcp":
            flow["cc"] = cc
    return out


def compare(path: Path, cc: str | None, duration: float | None, save: Path | None) -> str:
    data = with_cc(load_scenario(path).to_dict(), cc)
    s = sim.run(data, duration_s=duration).to_dict()
    e = emu.run(data, duration_s=duration)
    title = f"## {path.name}" + (f" (MPTCP cc = {cc})" if cc else "")
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        stem = path.stem + (f"-{cc}" if cc else "")
        (save / f"{stem}.sim.json").write_text(json.dumps(s, indent=1))
        (save / f"{stem}.emu.json").write_text(json.dumps(e, indent=1))
    return "\n\n".join(
        [
            title,
            f"{s['measured_s']:.0f} s measured after {data['warmup_s']:g} s warm-up.",
            flows_table(s, e),
            links_table(s, e),
            fidelity_line(e),
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="+", type=Path, metavar="SCENARIO")
    parser.add_argument("--cc", help="comma-separated cc values for the MPTCP flows")
    parser.add_argument("--duration", type=float, help="replace each scenario's duration_s")
    parser.add_argument("--save", type=Path, help="write both reports as JSON into this folder")
    args = parser.parse_args()
    ok, why = emu.available()
    if not ok:
        print(f"compare_backends: the emulator cannot run here: {why}", file=sys.stderr)
        return 2
    ccs: list[str | None] = [c.strip() for c in args.cc.split(",")] if args.cc else [None]
    try:
        for path in args.scenarios:
            for cc in ccs:
                print(compare(path, cc, args.duration, args.save), end="\n\n", flush=True)
    except UserError as exc:
        print(f"compare_backends: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
