"""perf between two emulated hosts joined by two rate-limited paths (linkem, network
namespaces): TCP bound to a path gets that path's capacity, unbound MPTCP opens a subflow on
each and gets about their sum. Oracles: the links' capacities times the payload share of a
1500-byte packet (1448 B of TCP payload; MPTCP's DSS option takes 20 B more).

Skips, with the reason, where the emulator cannot run (not root, no TUN or namespaces, MPTCP
off, programs not built)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mptcplab import emu
from mptcplab.backends.emu.addressing import Group
from mptcplab.backends.emu.runner import Run
from mptcplab.backends.perf.gain import read_records
from mptcplab.backends.perf.matrix import gain_matrix
from mptcplab.scenario.model import Scenario

ROOT = Path(__file__).resolve().parents[2]
CAPACITY_MBPS = {"fast": 8.0, "slow": 4.0}
TCP_PAYLOAD = 1448 / 1500
PORT = 5301
#: The receiver's window starts at its first read and ends at the read that crosses it: a
#: few kilobytes either way over 4 s.
WINDOW_SLACK = 1.01


ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python"), NO_COLOR="1")


@contextlib.contextmanager
def two_path_hosts() -> Iterator[Group]:
    """A client host with two paths to a server host running ``mptcplab perf server``."""
    ok, reason = emu.available()
    if not ok:
        pytest.skip(f"emulator unavailable: {reason}")
    links = [
        {"id": i, "capacity_mbps": c, "delay_ms": 10.0, "queue": {"kind": "droptail", "ms": 50}}
        for i, c in CAPACITY_MBPS.items()
    ]
    flow = {"id": "m", "protocol": "mptcp", "cc": "cubic", "paths": [["fast"], ["slow"]]}
    run = Run(Scenario.model_validate({"duration_s": 1.0, "links": links, "flows": [flow]}))
    try:
        run.build()
        hosts = run.plan.groups[0]
        server = subprocess.Popen(
            _in(hosts.server_ns, "server", "--bind", "0.0.0.0", "--port", str(PORT)),
            stdout=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        try:
            assert server.stdout is not None
            assert "listening on [0.0.0.0]:5301, MPTCP and TCP" in server.stdout.readline()
            yield hosts
        finally:
            server.terminate()
            server.wait(timeout=10)
    finally:
        run.teardown()


def _client(hosts: Group, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _in(hosts.client_ns, command, hosts.server_iface.address, *args),
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )


def _in(namespace: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", namespace, sys.executable, "-m", "mptcplab.cli", "perf", *args]


def test_tcp_gets_its_path_and_mptcp_both(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    with two_path_hosts() as hosts:
        fast, slow = (i.address for i in hosts.client_ifaces)
        series = ["-s", fast, "-s", slow, "-n", "1", "-t", "4", "-p", str(PORT)]
        gain = _client(hosts, "gain", *series, "-o", str(records))
    assert gain.returncode == 0, gain.stderr
    by_kind = {(r["transport"], r["bind"]): r for r in read_records(records)}
    for address, link in ((fast, "fast"), (slow, "slow")):
        tcp = by_kind[("tcp", address)]
        assert not tcp["mptcp"] and tcp["complete"]
        capacity = CAPACITY_MBPS[link]
        limit = capacity * TCP_PAYLOAD
        assert 0.9 * limit <= tcp["goodput_mbps"] <= WINDOW_SLACK * limit
    mptcp = by_kind[("mptcp", "*")]
    assert mptcp["mptcp"] and mptcp["subflows"] == 2
    total = sum(CAPACITY_MBPS.values())
    assert 0.85 * total <= mptcp["goodput_mbps"] <= WINDOW_SLACK * total * TCP_PAYLOAD
    matrix = gain_matrix(read_records(records)).set_index("source")
    assert matrix["critical"].isna().all()
    assert matrix.loc[slow, "log_gain"] > matrix.loc[fast, "log_gain"] > 0.2


def test_no_block_arrives_sooner_than_the_path_allows() -> None:
    """The first block crosses an idle path: its latency is the one-way delay plus its bytes'
    serialisation at the link rate, the least any block can take."""
    block = 8192
    with two_path_hosts() as hosts:
        args = ["-T", "tcp", "-B", hosts.client_ifaces[0].address, "-p", str(PORT)]
        args += ["-t", "2", "--blocks", str(block), "--sndbuf", "65536", "--json"]
        client = _client(hosts, "client", *args)
    assert client.returncode == 0, client.stderr
    record = json.loads(client.stdout)
    assert record["clock_uncertainty_ns"] == 0  # namespaces of one host share its clock
    packets = math.ceil(block / 1448)
    wire_bits = (block + packets * (1500 - 1448)) * 8
    floor_ms = 10.0 + wire_bits / (CAPACITY_MBPS["fast"] * 1e3)
    latencies = record["block_latencies_ms"]
    assert floor_ms <= min(latencies) <= floor_ms + 5.0
    assert len(latencies) > 100
