"""Run the benchmarks and write BENCHMARKS.md: `make bench`.

Sections, each with the command that produced it:
1. simulator throughput (`cargo bench -p mpsim --bench throughput`);
2. htsim and mpsim timed case by case in the same run (`scripts/htsim_reference.py`; needs a
   csg-htsim checkout in HTSIM_DIR or a network to clone one, said otherwise);
3. the link emulator at 2 × 100 Mbit/s (needs root; skipped with the reason otherwise);
4. wall time of the full CoNEXT 2013 low-BDP campaign on the simulator, into a fresh store.

Timings depend on the machine and its load; compare figures from one run of this script.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import htsim_reference

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem_gib:.0f} GiB, Linux {platform.release()}"


def run(cmd: list[str], **kw) -> tuple[str, float]:
    started = time.monotonic()
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True, **kw)
    return out.stdout, time.monotonic() - started


def simulator_section() -> str:
    cmd = ["cargo", "bench", "-q", "-p", "mpsim", "--bench", "throughput"]
    out, _ = run(cmd)
    table = "\n".join(line for line in out.splitlines() if line.startswith("|"))
    ratio = "\n".join(line for line in out.splitlines() if line.startswith("Per-packet cost"))
    return (
        "## Simulator throughput\n\n"
        f"Command: `{' '.join(cmd)}`. Each case runs at least five times and for at least\n"
        "two seconds; *wall s* is its best run, *slowest s* its slowest. One bottleneck buffer of\n"
        "one BDP, 1500-byte packets, uncongested ACKs. *ns/data pkt* is wall time per data packet\n"
        "delivered; each data packet also costs its ACK.\n\n"
        f"{table}\n\n{ratio}\n\n"
        "Reference: the targets were set from htsim figures of about 3.5–4 M packets/s per\n"
        "core and 0.017 s, 0.25 s and 0.28 s for cases B, C and D; the host's speed moves (the\n"
        "next section times htsim here, beside mpsim, and judges the targets against that). The\n"
        "project's target is half of htsim's wall time for A, B, C, D and 40 Reno, and at most\n"
        "twice the per-packet cost at 4,000 flows (E) than at 40.\n"
    )


def linkem_section() -> str:
    cmd = [str(VENV_BIN / "python"), "crates/linkem/benches/two_links.py"]
    shown = ".venv/bin/python crates/linkem/benches/two_links.py"
    header = "## Link emulator, 2 × 100 Mbit/s\n\n" + f"Command: `{shown}`\n\n"
    if os.geteuid() != 0:
        return header + "Skipped: needs root (network namespaces and TUN devices).\n"
    try:
        out, _ = run(cmd, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return header + f"Failed: {exc}\n"
    return header + "```\n" + out.strip() + "\n```\n"


def campaign_section() -> str:
    store = Path(tempfile.mkdtemp(prefix="mptcplab-bench-")) / "store.sqlite"
    cmd = [
        str(VENV_BIN / "mptcplab"),
        "run",
        "campaigns/conext13-lowbdp.toml",
        "-q",
        "-o",
        str(store),
    ]
    out, wall = run(cmd)
    runs = out.strip().splitlines()[-1] if out.strip() else ""
    shutil.rmtree(store.parent, ignore_errors=True)
    return (
        "## Full CoNEXT 2013 low-BDP campaign on the simulator\n\n"
        f"Command: `mptcplab run campaigns/conext13-lowbdp.toml -o <fresh store>`\n\n"
        f"Wall time: **{wall / 60:.1f} min** for 200 WSP points × 4 variants × 5 replications of\n"
        "60 simulated seconds, plus the single-path TCP reference runs, on all cores. The\n"
        "original study needed about 4 hours of Mininet time for one such design.\n\n"
        f"{runs}\n"
    )


#: BENCHMARKS.md keeps everything from this heading on when `make bench` rewrites the file:
#: one-off measurements (an optimisation tried and dropped) written with their command and date.
KEPT_HEADING = "## Measured by hand"


def kept_section(path: Path) -> str:
    """The hand-written part of an existing BENCHMARKS.md, from KEPT_HEADING to its end."""
    if not path.exists():
        return ""
    text = path.read_text()
    at = text.find("\n" + KEPT_HEADING)
    return text[at + 1 :] if at >= 0 else ""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Run the benchmarks and write BENCHMARKS.md (what `make bench` does).",
        epilog="HTSIM_DIR: a csg-htsim checkout for the htsim comparison (see "
        "scripts/htsim_reference.py --help).",
    )
    parser.add_argument(
        "--no-campaign",
        action="store_true",
        help="leave out the timing of the full CoNEXT 2013 low-BDP campaign",
    )
    args = parser.parse_args(argv)
    sections = [simulator_section(), htsim_reference.section(), linkem_section()]
    if not args.no_campaign:
        sections.append(campaign_section())
    text = (
        "# Benchmarks\n\n"
        f"Written by `make bench` on {dt.date.today().isoformat()}; machine: {machine()}.\n"
        "The machine is shared and noisy: compare figures from the same run.\n\n"
        + "\n".join(sections)
    )
    kept = kept_section(ROOT / "BENCHMARKS.md")
    if kept:
        text = text.rstrip("\n") + "\n\n" + kept
    (ROOT / "BENCHMARKS.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
