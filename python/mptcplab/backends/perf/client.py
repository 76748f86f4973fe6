"""``mptcplab perf client``: one saturated transfer to a perf server, and its record.

The sender writes as fast as the socket admits until the server answers: the server measures
for ``duration_s`` from the first byte it reads, so the goodput is the receiver's, over a
window the sender kept full. Then the sender aborts the connection (SO_LINGER 0): a large send
buffer would otherwise keep delivering into the next transfer for as long as it takes to drain.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import selectors
import socket
import struct
import time
from typing import Any

from mptcplab.backends.perf import sockets, wire
from mptcplab.backends.perf.sockets import PerfError, Transport

WRITE_CHUNK = 64 * 1024
CONNECT_TIMEOUT_S = 10.0
#: How long past ``duration_s`` the answer may take (the server's window opens one trip late).
ANSWER_TIMEOUT_S = 30.0


def _connect(
    server: str,
    port: int,
    *,
    transport: Transport,
    family: socket.AddressFamily | None,
    bind: str | None,
    congestion: str | None,
    sndbuf_bytes: int | None,
) -> socket.socket:
    if bind is not None:
        family = family or sockets.family_of(bind)
    af, address = sockets.resolve(server, port, family)
    sock = sockets.stream_socket(af, transport)
    try:
        if congestion is not None:
            sockets.set_congestion(sock, congestion)
        sockets.set_buffers(sock, sndbuf=sndbuf_bytes, rcvbuf=None)
        if bind is not None:
            try:
                sock.bind((bind, 0))
            except OSError as exc:
                raise PerfError(f"cannot bind to {bind}: {exc.strerror}") from None
        sock.settimeout(CONNECT_TIMEOUT_S)
        try:
            sock.connect(address)
        except OSError as exc:
            reason = exc.strerror or "timed out"
            raise PerfError(f"cannot connect to [{address[0]}]:{port}: {reason}") from None
    except BaseException:
        sock.close()
        raise
    return sock


def transfer(
    server: str,
    port: int = wire.DEFAULT_PORT,
    *,
    transport: Transport = "mptcp",
    duration_s: float = 10.0,
    family: socket.AddressFamily | None = None,
    bind: str | None = None,
    congestion: str | None = None,
    sndbuf_bytes: int | None = None,
) -> dict[str, Any]:
    """Send to ``server`` for ``duration_s``; return the record of the transfer.

    ``bind`` fixes the source address (for TCP, the path); an MPTCP socket left unbound lets the
    kernel add subflows over every address pair its path manager allows. The receive buffer
    that matters is the server's (``mptcplab perf server --rcvbuf``)."""
    if not duration_s > 0:
        raise ValueError(f"duration_s: expected a positive number of seconds, got {duration_s}")
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    sock = _connect(
        server,
        port,
        transport=transport,
        family=family,
        bind=bind,
        congestion=congestion,
        sndbuf_bytes=sndbuf_bytes,
    )
    with sock:
        local, remote = sock.getsockname()[0], sock.getpeername()[0]
        try:
            sent, most_subflows, answer = _send_until_answered(sock, duration_s)
        except (OSError, wire.WireError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or "timed out"
            raise PerfError(f"transfer to [{remote}]:{port} failed: {reason}") from None
        record: dict[str, Any] = {
            "host": socket.gethostname(),
            "started": started,
            "transport": transport,
            "family": 6 if sock.family == socket.AF_INET6 else 4,
            "bind": bind or "*",
            "source": local,
            "destination": remote,
            "server": server,
            "port": port,
            "duration_s": duration_s,
            "mptcp": sockets.is_mptcp(sock),
            "subflows": most_subflows,
            "congestion": sockets.congestion(sock),
            "sndbuf_bytes": sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
            "bytes_sent": sent,
        }
        _abort(sock)
    return record | answer


def _send_until_answered(
    sock: socket.socket, duration_s: float
) -> tuple[int, int | None, dict[str, Any]]:
    """Bytes written, most subflows seen, and the server's answer."""
    sock.sendall(wire.hello(duration_s))
    sock.setblocking(False)
    data = memoryview(bytes(WRITE_CHUNK))
    sent = 0
    most_subflows = sockets.subflows(sock)
    reply = b""
    now = time.monotonic()
    give_up, next_look = now + duration_s + ANSWER_TIMEOUT_S, now + 1.0
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        while True:
            for _, events in selector.select(timeout=1.0):
                if events & selectors.EVENT_READ:
                    chunk = sock.recv(wire.MAX_LINE)
                    if not chunk:
                        raise wire.WireError("the server closed the connection without answering")
                    reply += chunk
                    if (found := wire.split_line(reply)) is not None:
                        return sent, most_subflows, wire.parse_answer(found[0])
                if events & selectors.EVENT_WRITE:
                    with contextlib.suppress(BlockingIOError):
                        sent += sock.send(data)
            now = time.monotonic()
            if now >= next_look:
                next_look = now + 1.0
                now_subflows = sockets.subflows(sock)
                if now_subflows is not None:
                    most_subflows = max(most_subflows or 0, now_subflows)
            if now >= give_up:
                raise TimeoutError("no answer from the server")


def _abort(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
