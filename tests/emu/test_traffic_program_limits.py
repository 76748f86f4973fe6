"""The traffic program's own limits: a soft open-file limit of 1024 (the usual default) cut a
server of 1,100 flows down at its 1,021st accept, with all its results; the program now takes
the hard limit for itself at start-up."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
from pathlib import Path

import pytest

from mptcplab.backends.emu.programs import find_binary


def _limits(pid: int) -> tuple[str, str]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return soft, hard
    raise AssertionError("no open-file limit listed")


def test_the_program_raises_its_open_file_limit_to_the_hard_one(tmp_path: Path) -> None:
    binary = find_binary("mptcp-traffic")
    if binary is None:
        pytest.skip("mptcp-traffic is not built (make build)")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 64:
        pytest.skip(f"the hard open-file limit here is {hard}, nothing to raise to")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "server.json"
    config.write_text(
        json.dumps(
            {
                "netns": None,
                "listen": f"127.0.0.1:{port}",
                "transport": "tcp",
                "app": {"kind": "bulk"},
                "warmup_s": 0.0,
                "duration_s": 1.0,
                "sample_interval_ms": 100.0,
                "out": str(tmp_path / "server-out.json"),
            }
        )
    )
    proc = subprocess.Popen(
        [str(binary), "server", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard)),
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # listening, waiting for its "go"
        assert ready, proc.stderr.read() if proc.stderr else ""
        soft_now, hard_now = _limits(proc.pid)
        assert soft_now == hard_now, (soft_now, hard_now)
    finally:
        proc.kill()
        proc.wait(10)
