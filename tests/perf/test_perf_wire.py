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
