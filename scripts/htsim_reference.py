"""htsim timed beside mpsim on the same cases, case by case in the same run (`make bench`).

The speed targets of the simulator are relative to htsim, the C++ packet simulator of the
MPTCP literature. A fixed figure measured once goes stale on a shared machine whose speed moves
by half from one hour to the next; timing both simulators back to back does not. This builds
htsim's library from a csg-htsim checkout (`HTSIM_DIR`, else `.cache/csg-htsim`, else a clone of
HTSIM_URL there), links `scripts/htsim/bench_cases.cpp` against it, and for each case runs
htsim, then mpsim's throughput bench on the same case, then htsim again (best runs count).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
HTSIM_URL = "https://github.com/Broadcom/csg-htsim"
DRIVER = ROOT / "scripts" / "htsim" / "bench_cases.cpp"

# A case's best run counts; each side runs at least this often and this long (as the Rust bench).
MIN_RUNS = 5
MIN_SECONDS = 2.0


@dataclass(frozen=True)
class Case:
    key: str  # the driver's name for it
    prefix: str  # how the Rust bench's case name starts (its filter)
    label: str
    target: float | None  # at most this fraction of htsim's wall time


CASES = [
    Case("A", "A:", "A: 1 Reno, 100 Mbit/s, 60 s", 0.5),
    Case("R", "40 Reno", "40 Reno over two 100 Mbit/s, 60 s", 0.5),
    Case("B", "B:", "B: 1 LIA, 10 Mbit/s·20 ms + 2 Mbit/s·150 ms, 60 s", 0.5),
    Case("C", "C:", "C: 1 LIA, 2 × 100 Mbit/s·20 ms, 60 s", 0.5),
    Case("D", "D:", "D: 30 LIA + 10 Reno, 60 s", 0.5),
    Case("E", "E:", "E: 3000 LIA + 1000 Reno, 2 × 1 Gbit/s, 10 s", None),
]


@dataclass(frozen=True)
class Timing:
    wall_s: float
    data_packets: int
    runs: int

    @property
    def ns_per_packet(self) -> float:
        return self.wall_s * 1e9 / max(self.data_packets, 1)


class Unavailable(Exception):
    """htsim cannot be built here; the message says why."""


def _run(cmd: list[str], cwd: Path = ROOT, timeout: float = 900) -> str:
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise Unavailable(f"`{' '.join(cmd)}` failed: {(out.stderr or out.stdout).strip()[-300:]}")
    return out.stdout


def locate() -> Path:
    """A csg-htsim checkout: HTSIM_DIR, the cached clone, or a fresh clone."""
    given = os.environ.get("HTSIM_DIR")
    if given:
        path = Path(given)
        if not (path / "sim" / "Makefile").is_file():
            raise Unavailable(f"HTSIM_DIR={given} is not a csg-htsim checkout (no sim/Makefile)")
        return path
    cached = CACHE / "csg-htsim"
    if (cached / "sim" / "Makefile").is_file():
        return cached
    if shutil.which("git") is None:
        raise Unavailable("no HTSIM_DIR, no cached checkout and no git to clone one")
    CACHE.mkdir(exist_ok=True)
    try:
        _run(["git", "clone", "-q", "--depth", "1", HTSIM_URL, str(cached)], timeout=300)
    except (Unavailable, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(cached, ignore_errors=True)
        raise Unavailable(f"no HTSIM_DIR and cloning {HTSIM_URL} failed ({exc})") from exc
    return cached


def build(src: Path) -> tuple[Path, str]:
    """htsim's library as its Makefile builds it, and the driver linked against it."""
    if shutil.which("g++") is None:
        raise Unavailable("no g++ to build htsim")
    # Built in a copy under .cache, so that a checkout given as HTSIM_DIR is left as it was;
    # copies keep their sources' times, so make rebuilds only what changed there.
    CACHE.mkdir(exist_ok=True)
    sim = CACHE / "htsim-build"
    shutil.copytree(
        src / "sim", sim, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.o", "*.a")
    )
    _run(["make", "-s", f"-j{os.cpu_count() or 1}", "libhtsim.a"], cwd=sim)
    binary = CACHE / "htsim-bench-cases"
    _run(
        [
            "g++",
            "-O3",
            "-std=c++14",
            f"-I{sim}",
            str(DRIVER),
            str(sim / "libhtsim.a"),
            "-o",
            str(binary),
        ]
    )
    try:
        commit = _run(["git", "rev-parse", "--short", "HEAD"], cwd=src).strip()
    except Unavailable:
        commit = "unknown commit"
    return binary, commit


def htsim_timing(binary: Path, key: str) -> Timing:
    best, packets, runs, spent = float("inf"), 0, 0, 0.0
    while runs < MIN_RUNS or spent < MIN_SECONDS:
        started = time.monotonic()
        fields = _run([str(binary), key]).split()
        spent += time.monotonic() - started
        runs += 1
        best = min(best, float(fields[1]))
        packets = int(fields[2])
    return Timing(best, packets, runs)


def parse_bench_table(out: str) -> list[dict[str, str]]:
    """The rows of the throughput bench's Markdown table, keyed by its header's column names."""
    table = [line.strip().strip("|").split("|") for line in out.splitlines() if line[:1] == "|"]
    if len(table) < 2:
        return []
    names = [cell.strip() for cell in table[0]]
    return [dict(zip(names, (c.strip() for c in row), strict=True)) for row in table[2:]]


def mpsim_timing(prefix: str) -> Timing:
    out = _run(["cargo", "bench", "-q", "-p", "mpsim", "--bench", "throughput", "--", prefix])
    rows = parse_bench_table(out)
    if len(rows) != 1:
        raise Unavailable(f"the throughput bench printed {len(rows)} rows for case {prefix!r}")
    try:
        row = rows[0]
        return Timing(float(row["wall s"]), int(row["data pkts"]), int(row["runs"]))
    except (KeyError, ValueError) as exc:
        raise Unavailable(f"unexpected throughput bench table: {exc}") from exc


def callgrind_instructions(stderr: str) -> int:
    """The instruction count of a `valgrind --tool=callgrind` run, from its "Collected" line."""
    for line in stderr.splitlines():
        _, sep, count = line.partition("Collected :")
        if sep and count.strip().isdigit():
            return int(count.strip())
    raise Unavailable("callgrind printed no instruction count")


def count_instructions(cmd: list[str]) -> int:
    """Instructions one run of `cmd` executes, whole process, under callgrind (deterministic)."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if out.returncode != 0:
        raise Unavailable(f"valgrind on `{' '.join(cmd)}` failed: {out.stderr.strip()[-300:]}")
    return callgrind_instructions(out.stderr)


def mpsim_bench_binary() -> Path:
    """The throughput bench's executable, as cargo builds it for `cargo bench`."""
    out = _run(
        [
            "cargo",
            "bench",
            "-q",
            "-p",
            "mpsim",
            "--bench",
            "throughput",
            "--no-run",
            "--message-format=json",
        ]
    )
    for line in out.splitlines():
        message = json.loads(line)
        if (
            message.get("reason") == "compiler-artifact"
            and message.get("executable")
            and message["target"]["name"] == "throughput"
        ):
            return Path(message["executable"])
    raise Unavailable("cargo named no executable for the throughput bench")


def instructions_table(binary: Path, timings: dict[str, tuple[Timing, Timing]]) -> str:
    """Instructions per delivered data packet, each simulator run once per case under callgrind.

    Wall times on a shared machine move from run to run; instruction counts do not, so this
    table shows how much of the difference is work done and how much is how fast it runs.
    """
    if shutil.which("valgrind") is None:
        return "Instructions per data packet: not measured (no valgrind).\n"
    try:
        bench = mpsim_bench_binary()
        rows = []
        for case in CASES:
            theirs, ours = timings[case.key]
            h = count_instructions([str(binary), case.key]) / max(theirs.data_packets, 1)
            m = count_instructions([str(bench), "--once", case.prefix]) / max(ours.data_packets, 1)
            rows.append(f"| {case.label} | {h:,.0f} | {m:,.0f} | {m / h:.2f} |")
    except (Unavailable, subprocess.TimeoutExpired) as exc:
        return f"Instructions per data packet: not measured ({exc}).\n"
    return (
        "Instructions per delivered data packet (`valgrind --tool=callgrind`, whole process, one\n"
        "run of each case; deterministic, unlike the wall times above):\n\n"
        "| case | htsim instr/pkt | mpsim instr/pkt | mpsim ÷ htsim |\n"
        "|---|---:|---:|---:|\n" + "\n".join(rows) + "\n"
    )


def section() -> str:
    header = (
        "## Against htsim, case by case in the same run\n\n"
        "Command: `scripts/htsim_reference.py` (part of `make bench`): htsim's library built by\n"
        "its own Makefile from a csg-htsim checkout, `scripts/htsim/bench_cases.cpp` linked\n"
        "against it; for each case htsim, then mpsim's throughput bench on the case, then\n"
        "htsim again. Best runs count (each side at least five runs and two seconds).\n\n"
    )
    try:
        binary, commit = build(locate())
    except Unavailable as exc:
        return header + f"Not measured: {exc}. Set HTSIM_DIR to a csg-htsim checkout.\n"
    rows, timings = [], {}
    for case in CASES:
        first = htsim_timing(binary, case.key)
        ours = mpsim_timing(case.prefix)
        second = htsim_timing(binary, case.key)
        theirs = min(first, second, key=lambda t: t.wall_s)
        theirs = Timing(theirs.wall_s, theirs.data_packets, first.runs + second.runs)
        timings[case.key] = (theirs, ours)
        ratio = ours.wall_s / theirs.wall_s
        if case.target is None:
            verdict = "see E/D below"
        else:
            verdict = f"≤ {case.target}: {'met' if ratio <= case.target else 'not met'}"
        rows.append(
            f"| {case.label} | {theirs.runs} | {theirs.wall_s:.3f} | {ours.wall_s:.3f} | "
            f"{ratio:.2f} | {theirs.data_packets / theirs.wall_s / 1e6:.2f} M | "
            f"{ours.data_packets / ours.wall_s / 1e6:.2f} M | {verdict} |"
        )
    (h_d, m_d), (h_e, m_e) = timings["D"], timings["E"]
    scaling = (
        "Per-packet cost at 4,000 flows over 40 flows (E / D): "
        f"mpsim {m_e.ns_per_packet / m_d.ns_per_packet:.2f} (target ≤ 2), "
        f"htsim {h_e.ns_per_packet / h_d.ns_per_packet:.2f}.\n"
    )
    return (
        header + f"htsim: csg-htsim {commit}, built with its Makefile's flags (g++ -O3).\n\n"
        "| case | htsim runs | htsim s | mpsim s | mpsim ÷ htsim | htsim data pkts/s | "
        "mpsim data pkts/s | target |\n"
        "|---|---:|---:|---:|---:|---:|---:|---|\n" + "\n".join(rows) + "\n\n" + scaling + "\n"
        "Both simulators deliver about the same number of data packets per case. htsim's model\n"
        "is lighter: its TCP recovers from duplicate ACKs alone (no SACK), and its MPTCP (as\n"
        "built by default, without MODEL_RECEIVE_WINDOW) has no data-level sequence space,\n"
        "DATA_ACK or shared receive buffer; mpsim models all of them.\n\n"
        + instructions_table(binary, timings)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Time htsim and mpsim case by case on the same cases and print the "
        "Markdown section of BENCHMARKS.md that compares them.",
        epilog="HTSIM_DIR: a csg-htsim checkout to build htsim from (else .cache/csg-htsim, "
        f"else a clone of {HTSIM_URL}). The checkout is not written to.",
    )
    parser.parse_args(argv)
    print(section())


if __name__ == "__main__":
    main()
