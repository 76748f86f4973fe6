"""The checks behind ``mptcplab doctor``: can this machine run the emulator, and what is
missing? Each check says what it found and, when it fails, how to fix it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from mptcplab.backends.emu import kernel
from mptcplab.backends.emu.programs import BINARIES, find_binary


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    found: str
    fix: str = ""
    #: A failed required check means the emulator cannot run.
    required: bool = True


def _run(*cmd: str) -> tuple[bool, str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def _namespaces(root: bool) -> Check:
    if not root:
        return Check("network namespaces", False, "not checked (needs root)", "run as root")
    name = f"mptcplab-doctor-{os.getpid()}"
    ok, out = _run("ip", "netns", "add", name)
    if ok:
        _run("ip", "netns", "delete", name)
        return Check("network namespaces", True, "a namespace can be created")
    return Check(
        "network namespaces", False, out or "ip netns add failed", "install iproute2; run as root"
    )


def _tun() -> Check:
    try:
        fd = os.open("/dev/net/tun", os.O_RDWR)
        os.close(fd)
    except OSError as exc:
        return Check("TUN devices", False, f"/dev/net/tun: {exc.strerror}", "modprobe tun")
    return Check("TUN devices", True, "/dev/net/tun opens")


def idle_cores(interval_s: float = 0.5) -> float:
    """Cores' worth of idle CPU over a short interval (from /proc/stat)."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return idle, sum(fields)

    i0, t0 = sample()
    time.sleep(interval_s)
    i1, t1 = sample()
    cores = os.cpu_count() or 1
    return cores * (i1 - i0) / max(t1 - t0, 1)


def run_checks() -> list[Check]:
    info = kernel.probe()
    checks = [
        Check("root", info.root, "uid 0" if info.root else f"uid {os.geteuid()}", "run as root"),
        _tun(),
        _namespaces(info.root),
    ]
    enabled = {
        True: "net.mptcp.enabled = 1",
        False: "net.mptcp.enabled = 0 here (each run's namespaces enable it)",
        None: "absent",
    }
    checks.append(
        Check(
            "MPTCP",
            info.mptcp_enabled is not None,
            f"kernel {info.release}, {enabled[info.mptcp_enabled]}",
            "a kernel ≥ 5.6 built with CONFIG_MPTCP",
        )
    )
    sysctl = shutil.which("sysctl")
    checks.append(
        Check(
            "sysctl",
            sysctl is not None,
            sysctl or "not found",
            "install procps (apt-get install procps)",
        )
    )
    ok, out = _run("ip", "mptcp", "limits", "show")
    checks.append(
        Check(
            "iproute2 mptcp",
            ok,
            "ip mptcp works" if ok else out.splitlines()[-1] if out else "ip mptcp failed",
            "install iproute2 ≥ 5.8",
        )
    )
    for name in BINARIES:
        path = find_binary(name)
        checks.append(
            Check(
                name,
                path is not None,
                str(path) if path else "not built",
                "make build (cargo build --release -p linkem)",
            )
        )
    cc_ok = info.offers_cc("reno") and info.offers_cc("cubic")
    checks.append(
        Check(
            "congestion controls",
            cc_ok,
            f"available: {info.cc_offer()}; namespaces may select by sysctl: "
            f"{', '.join(info.allowed_cc) or 'none'} (the emulator sets them per socket)",
            "modprobe tcp_cubic",
            required=False,
        )
    )
    checks.append(
        Check(
            "MPTCP schedulers",
            True,
            ", ".join(info.schedulers) or "default only",
            required=False,
        )
    )
    checks.append(
        Check(
            "coupled CC (BPF lia/olia/balia)",
            info.coupled_ok,
            "loadable" if info.coupled_ok else info.coupled_reason,
            "see bpf/README; without them only uncoupled reno/cubic run on the emulator",
            required=False,
        )
    )
    free = idle_cores()
    checks.append(
        Check(
            "free CPU",
            free >= 1.0,
            f"{free:.1f} of {os.cpu_count()} cores idle",
            "stop other load: linkem needs about one core at 2 × 100 Mbit/s",
            required=False,
        )
    )
    return checks
