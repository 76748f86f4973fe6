"""What a perf client and server say around the data."""

from __future__ import annotations

import pytest

from mptcplab.backends.perf import wire


def test_hello_is_one_line_the_other_end_accepts() -> None:
    line, rest = wire.split_line(wire.hello(2.5) + b"\0\0data") or (b"", b"")
    assert wire.parse_hello(line)["duration_s"] == 2.5
    assert wire.parse_hello(line)["sync_rounds"] == 1  # bulk needs no clock offset
    assert wire.parse_hello(wire.hello(1.0, 8192)[:-1])["sync_rounds"] == wire.SYNC_ROUNDS
    assert rest == b"\0\0data"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"GET / HTTP/1.1", "not JSON"),
        (b'{"magic": "iperf"}', "not a mptcplab perf hello"),
        (b'{"magic": "mptcplab-perf", "version": 99}', "protocol version 99"),
        (b'{"magic": "mptcplab-perf", "version": 1}', "duration_s None: expected seconds"),
        (b'{"magic": "mptcplab-perf", "version": 1, "duration_s": 0}', "duration_s 0"),
        (b'{"magic": "mptcplab-perf", "version": 1, "duration_s": true}', "duration_s True"),
        (b'{"magic": "mptcplab-perf", "version": 1, "duration_s": 1e9}', "in \\(0, 3600\\]"),
        (
            b'{"magic": "mptcplab-perf", "version": 1, "duration_s": 1, "block_bytes": 0}',
            "block_bytes 0: expected bytes",
        ),
        (
            b'{"magic": "mptcplab-perf", "version": 1, "duration_s": 1, "sync_rounds": 99}',
            "sync_rounds 99: expected 1 to 8",
        ),
    ],
)
def test_a_stranger_is_told_apart(line: bytes, says: str) -> None:
    with pytest.raises(wire.WireError, match=says):
        wire.parse_hello(line)


def test_a_line_that_never_ends_is_refused() -> None:
    assert wire.split_line(b"x" * 100) is None
    with pytest.raises(wire.WireError, match="no line end"):
        wire.split_line(b"x" * (wire.MAX_LINE + 1))


def test_an_answer_carrying_an_error_raises_it() -> None:
    with pytest.raises(wire.WireError, match="the server reports: boom"):
        wire.parse_answer(b'{"error": "boom"}')
    assert wire.parse_answer(b'{"bytes_received": 3}') == {"bytes_received": 3}


def test_the_server_stops_draining_a_sender_that_never_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The drain after the answer is bounded in all, not per read: a peer that keeps sending
    (not a perf client) does not hold the connection and its thread for ever."""
    import socket
    import threading
    import time

    from mptcplab.backends.perf import server

    monkeypatch.setattr(server, "DRAIN_TIMEOUT_S", 1.0)
    ours, theirs = socket.socketpair()
    stop = threading.Event()

    def keep_sending() -> None:
        with theirs:
            while not stop.is_set():
                theirs.sendall(b"x" * 1024)
                time.sleep(0.005)

    sender = threading.Thread(target=keep_sending, daemon=True)
    sender.start()
    drained = threading.Thread(target=server._drain, args=(ours,), daemon=True)
    drained.start()
    drained.join(timeout=30)
    finished, still_sending = not drained.is_alive(), sender.is_alive()
    stop.set()
    sender.join(timeout=5)
    ours.close()
    assert finished and still_sending


def test_the_servers_line_says_when_a_transfer_ended_early() -> None:
    from mptcplab.commands.perf import transfer_line

    answer = {
        "bytes_received": 1000,
        "receive_s": 2.07,
        "goodput_mbps": 0.004,
        "complete": True,
        "server_mptcp": True,
        "server_subflows": 2,
    }
    assert "incomplete" not in transfer_line(("10.0.0.1", 1), answer)
    line = transfer_line(("10.0.0.1", 1), answer | {"complete": False})
    assert "2.07 s" in line and "(incomplete: the client closed early)" in line
