"""The kernel behaviour the emulator's report guards against (``report._until_disconnected``):
once the peer resets an MPTCP connection, the connection's first subflow stays in the subflow
list, disconnected, and its TCP_INFO counters read zero. Runs on loopback; skips where the
emulator cannot run (MPTCP off among the reasons)."""

from __future__ import annotations

import ctypes
import socket
import struct
import time

import pytest

IPPROTO_MPTCP = 262
SOL_MPTCP = 284
MPTCP_TCPINFO = 2
#: struct mptcp_subflow_data: size_subflow_data, num_subflows, size_kernel, size_user.
HEADER = struct.Struct("IIII")
TCP_INFO_BYTES = 232
TCP_ESTABLISHED = 1
TCP_CLOSE = 7


def subflow_infos(sock: socket.socket) -> list[tuple[int, int, int]]:
    """(tcpi_state, tcpi_bytes_acked, tcpi_data_segs_out) of each subflow. Python's
    getsockopt cannot pass the request header MPTCP_TCPINFO reads, hence libc."""
    libc = ctypes.CDLL(None, use_errno=True)
    size = HEADER.size + 4 * TCP_INFO_BYTES
    buf = ctypes.create_string_buffer(size)
    HEADER.pack_into(buf, 0, HEADER.size, 0, 0, TCP_INFO_BYTES)
    length = ctypes.c_uint32(size)
    rc = libc.getsockopt(sock.fileno(), SOL_MPTCP, MPTCP_TCPINFO, buf, ctypes.byref(length))
    assert rc == 0, f"getsockopt(MPTCP_TCPINFO): errno {ctypes.get_errno()}"
    raw = buf.raw[: length.value]
    _, count, _, stride = HEADER.unpack_from(raw)
    out = []
    for i in range(count):
        at = HEADER.size + i * stride
        acked = struct.unpack_from("Q", raw, at + 120)[0]
        segs = struct.unpack_from("I", raw, at + 156)[0]
        out.append((raw[at], acked, segs))
    return out


@pytest.mark.usefixtures("emulator")
def test_the_first_subflow_reads_zero_counters_after_the_peers_reset() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
        client.connect(listener.getsockname())
        server, _ = listener.accept()
        sent = 1_000_000
        client.sendall(b"x" * sent)
        got = 0
        while got < sent:
            got += len(server.recv(1 << 16))
        deadline = time.monotonic() + 5
        while subflow_infos(client)[0][1] < sent and time.monotonic() < deadline:
            time.sleep(0.01)
        state, acked, segs = subflow_infos(client)[0]
        assert state == TCP_ESTABLISHED and acked >= sent and segs > 0
        # SO_LINGER 0: close with a reset, as the traffic server does at the end of a run.
        server.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        server.close()
        # The state turns to CLOSE a moment before the counters are cleared (a loaded machine
        # read CLOSE with the counters still set): wait for both.
        deadline = time.monotonic() + 5
        while subflow_infos(client)[0] != (TCP_CLOSE, 0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert subflow_infos(client)[0] == (TCP_CLOSE, 0, 0)
        client.close()
