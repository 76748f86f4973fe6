"""The traffic program's own limits: a soft open-file limit of 1024 (the usual default) cut a
server of 1,100 flows down at its 1,021st accept, with all its results; the program now takes
the hard limit for itself at start-up. Where the hard limit itself is too small, the server
stops with a message that names the accept that failed."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import time
from pathlib import Path

import pytest

from mptcplab.backends.emu.programs import find_binary


def _limits(pid: int) -> tuple[str, str]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return soft, hard
    raise AssertionError("no open-file limit listed")


def _server_config(tmp_path: Path, duration_s: float) -> tuple[Path, int]:
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
                "duration_s": duration_s,
                "sample_interval_ms": 100.0,
                "out": str(tmp_path / "server-out.json"),
            }
        )
    )
    return config, port


def _start_server(config: Path, soft: int, hard: int) -> subprocess.Popen[str]:
    binary = find_binary("mptcp-traffic")
    if binary is None:
        pytest.skip("mptcp-traffic is not built (make build)")
    return subprocess.Popen(
        [str(binary), "server", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard)),
    )


def test_the_program_raises_its_open_file_limit_to_the_hard_one(tmp_path: Path) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 64:
        pytest.skip(f"the hard open-file limit here is {hard}, nothing to raise to")
    config, _ = _server_config(tmp_path, 1.0)
    proc = _start_server(config, 64, hard)
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # listening, waiting for its "go"
        assert ready, proc.stderr.read() if proc.stderr else ""
        soft_now, hard_now = _limits(proc.pid)
        assert soft_now == hard_now, (soft_now, hard_now)
    finally:
        proc.kill()
        proc.wait(10)


def test_a_server_out_of_descriptors_names_the_accept_that_failed(tmp_path: Path) -> None:
    # Ten descriptors: three standard streams, epoll, timerfd, the listener and a few
    # connections; the connections beyond them cannot be accepted.
    config, port = _server_config(tmp_path, 5.0)
    proc = _start_server(config, 10, 10)
    clients: list[socket.socket] = []
    try:
        assert proc.stdout is not None and proc.stdin is not None
        ready = proc.stdout.readline()
        assert ready, proc.stderr.read() if proc.stderr else ""
        proc.stdin.write(f"go {time.clock_gettime_ns(time.CLOCK_MONOTONIC)}\n")
        proc.stdin.flush()
        for _ in range(20):
            if proc.poll() is not None:
                break
            try:
                clients.append(socket.create_connection(("127.0.0.1", port), timeout=2))
            except OSError:
                break
            time.sleep(0.02)
        _, err = proc.communicate(timeout=10)
    finally:
        for c in clients:
            c.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 1
    assert "accepting connection" in err and "Too many open files" in err, err
