"""Helpers shared by the kernel congestion-control tests: BPF object listing via bpftool."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mptcplab.backends import kernel_cc

# Names of every BPF object the three congestion controls create: the struct_ops maps, the
# connection and config maps, libbpf's .rodata maps, and the programs.
OUR_MAP_NAMES = frozenset(
    {
        *kernel_cc.NAMES,
        "lia_conns",
        "olia_conns",
        "balia_conns",
        "lia_cfg",
        "olia_cfg",
        "balia_cfg",
        "mptcp_li.rodata",
        "mptcp_ol.rodata",
        "mptcp_ba.rodata",
    }
)
OUR_PROG_PREFIXES = ("lia_", "olia_", "balia_")


def bpftool_objects(kind: str) -> list[dict[str, object]]:
    """`bpftool map show` or `bpftool prog show` as JSON."""
    bpftool = shutil.which("bpftool")
    if bpftool is None:
        pytest.skip("bpftool is not installed")
    proc = subprocess.run(
        [bpftool, "-j", kind, "show"], capture_output=True, text=True, check=True, timeout=30
    )
    result: list[dict[str, object]] = json.loads(proc.stdout or "[]")
    return result


def our_bpf_objects() -> list[str]:
    maps = [f"map {m['name']}" for m in bpftool_objects("map") if m.get("name") in OUR_MAP_NAMES]
    progs = [
        f"prog {p['name']}"
        for p in bpftool_objects("prog")
        if p.get("type") == "struct_ops" and str(p.get("name", "")).startswith(OUR_PROG_PREFIXES)
    ]
    return maps + progs


def wait_until_no_bpf_objects(timeout_s: float = 10.0) -> list[str]:
    """The kernel frees maps and programs after an RCU grace period; poll until they are gone
    and return what is left (empty when clean)."""
    deadline = time.monotonic() + timeout_s
    left = our_bpf_objects()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = our_bpf_objects()
    return left


def registered_ccs() -> set[str]:
    return set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())


def in_force(name: str) -> dict[str, Any]:
    """The registration in force for ``name``: its one instance in state ``inuse``."""
    (inst,) = [i for i in kernel_cc.status()[name]["instances"] if i["state"] == "inuse"]
    return inst
