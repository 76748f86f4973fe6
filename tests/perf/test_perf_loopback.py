"""One transfer over the loopback interface: the receiver's count is the sender's, the kernel's
choice of TCP or MPTCP is reported, and what goes wrong is said in one sentence."""

from __future__ import annotations

import socket
import threading

import pytest

from mptcplab.backends.perf.client import transfer
from mptcplab.backends.perf.server import PerfServer, serve_connection
from mptcplab.backends.perf.sockets import PerfError


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_tcp_transfer_is_measured_at_the_receiver_for_the_time_asked(
    perf_server: PerfServer, host: str
) -> None:
    record = transfer(host, perf_server.port, transport="tcp", duration_s=0.3)
    assert 0 < record["bytes_received"] <= record["bytes_sent"]
    assert record["complete"] is True
    assert record["mptcp"] is False and record["server_mptcp"] is False
    assert record["family"] == (6 if ":" in host else 4)
    seconds = record["receive_s"]
    assert 0.3 <= seconds < 1.0
    assert record["goodput_mbps"] == pytest.approx(record["bytes_received"] * 8 / seconds / 1e6)


@pytest.mark.usefixtures("mptcp_sockets")
def test_mptcp_transfer_runs_mptcp_end_to_end(perf_server: PerfServer) -> None:
    record = transfer("127.0.0.1", perf_server.port, transport="mptcp", duration_s=0.3)
    assert record["mptcp"] is True and record["server_mptcp"] is True
    assert record["subflows"] >= 1
    assert 0 < record["bytes_received"] <= record["bytes_sent"]


@pytest.mark.usefixtures("mptcp_sockets")
def test_an_mptcp_client_of_a_tcp_only_server_falls_back_and_says_so() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def tcp_only_server() -> None:
        # A plain TCP listener: the kernel answers the MPTCP handshake without MP_CAPABLE.
        conn, _ = listener.accept()
        with conn:
            serve_connection(conn)

    thread = threading.Thread(target=tcp_only_server, daemon=True)
    thread.start()
    record = transfer("127.0.0.1", port, transport="mptcp", duration_s=0.2)
    thread.join(timeout=5)
    listener.close()
    assert record["mptcp"] is False and record["transport"] == "mptcp"


def test_a_port_nobody_listens_on_is_refused_by_name() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PerfError, match=rf"cannot connect to \[127.0.0.1\]:{port}: .*refused"):
        transfer("127.0.0.1", port, transport="tcp", duration_s=0.1)


def test_a_peer_that_is_not_a_perf_server_is_named() -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def close_at_once() -> None:
        conn, _ = listener.accept()
        conn.close()

    threading.Thread(target=close_at_once, daemon=True).start()
    with pytest.raises(PerfError, match=r"failed: .*(closed|reset|Broken pipe)"):
        transfer("127.0.0.1", listener.getsockname()[1], transport="tcp", duration_s=0.2)
    listener.close()


def test_a_congestion_control_the_kernel_lacks_lists_those_it_has(
    perf_server: PerfServer,
) -> None:
    with pytest.raises(PerfError, match=r"'no-such-cc' is not available.*available: .*reno"):
        transfer("127.0.0.1", perf_server.port, transport="tcp", congestion="no-such-cc")


def test_a_source_address_not_on_this_host_is_refused(perf_server: PerfServer) -> None:
    with pytest.raises(PerfError, match=r"cannot bind to 192\.0\.2\.1"):
        transfer("127.0.0.1", perf_server.port, transport="tcp", bind="192.0.2.1")


def test_the_congestion_control_asked_for_is_the_one_used(perf_server: PerfServer) -> None:
    record = transfer(
        "127.0.0.1", perf_server.port, transport="tcp", duration_s=0.1, congestion="reno"
    )
    assert record["congestion"] == "reno"


def test_a_busy_port_is_refused_by_the_server() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(PerfError, match=rf"cannot listen on \[127.0.0.1\]:{port}"):
            PerfServer("127.0.0.1", port)


def test_blocks_on_one_host_are_timed_on_one_clock(perf_server: PerfServer) -> None:
    record = transfer(
        "127.0.0.1", perf_server.port, transport="tcp", duration_s=0.3, block_bytes=8192
    )
    latencies = record["block_latencies_ms"]
    assert (record["clock_offset_ns"], record["clock_uncertainty_ns"]) == (0, 0)
    # Blocks completed inside the window, and none read before it was written.
    assert 0 < len(latencies) <= record["bytes_received"] // 8192
    assert min(latencies) >= 0
    assert record["latency_ms"]["blocks"] == len(latencies)
    assert record["latency_ms"]["p50"] <= record["latency_ms"]["max"] == max(latencies)


def test_a_server_on_another_clock_is_matched_within_the_bound_it_gives() -> None:
    server = PerfServer("127.0.0.1", 0, clock_id="another host")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        record = transfer(
            "127.0.0.1", server.port, transport="tcp", duration_s=0.2, block_bytes=4096
        )
    finally:
        server.shutdown()
    # The clocks are in fact one: the estimated offset is its own error.
    assert 0 < record["clock_uncertainty_ns"] < 50_000_000
    assert abs(record["clock_offset_ns"]) <= record["clock_uncertainty_ns"]
    assert min(record["block_latencies_ms"]) >= -record["clock_uncertainty_ns"] / 1e6
