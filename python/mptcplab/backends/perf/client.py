"""``mptcplab perf client``: one saturated transfer to a perf server, and its record.

The sender writes as fast as the socket admits until the server answers: the server measures
for ``duration_s`` from the first byte it reads, so the goodput is the receiver's, over a
window the sender kept full. Then the sender aborts the connection (SO_LINGER 0): a large send
buffer would otherwise keep delivering into the next transfer for as long as it takes to drain.

With ``block_bytes`` the data is a stream of blocks written back to back, as the simulator's
``blocks`` application writes them (NSDI 2012 §5): a block's latency runs from the send call
that wrote the previous block's last byte (the simulator's stamp: the wait for room in the
send buffer counts) to the read that completed it at the server, the server's time
brought to this host's clock with the offset taken at the start (see :mod:`.wire`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import selectors
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mptcplab.backends.perf import sockets, wire
from mptcplab.backends.perf.sockets import PerfError, Transport

WRITE_CHUNK = 64 * 1024
READ_CHUNK = 64 * 1024
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
        if congestion is not None:
            sockets.check_applied(sock, congestion)
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
    block_bytes: int | None = None,
) -> dict[str, Any]:
    """Send to ``server`` for ``duration_s``; return the record of the transfer.

    ``bind`` fixes the source address (for TCP, the path); an MPTCP socket left unbound lets the
    kernel add subflows over every address pair its path manager allows. The receive buffer
    that matters is the server's (``mptcplab perf server --rcvbuf``)."""
    if not 0 < duration_s <= wire.MAX_DURATION_S:
        raise ValueError(
            f"duration_s: expected seconds in (0, {wire.MAX_DURATION_S:g}], got {duration_s}"
        )
    if block_bytes is not None and not wire.MIN_BLOCK_BYTES <= block_bytes <= wire.MAX_BLOCK_BYTES:
        raise ValueError(
            f"block_bytes: expected bytes in [{wire.MIN_BLOCK_BYTES}, {wire.MAX_BLOCK_BYTES}]"
        )
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
            offset_ns, uncertainty_ns = _handshake(sock, duration_s, block_bytes)
            sent = _send_until_answered(sock, duration_s, block_bytes)
        except (OSError, wire.WireError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or "timed out"
            raise PerfError(f"transfer to [{remote}]:{port} failed: {reason}") from None
        answer = sent.answer
        record: dict[str, Any] = {
            "host": socket.gethostname(),
            "started": started,
            "transport": transport,
            "family": sockets.version_of(sock.family),
            "bind": bind or "*",
            "source": local,
            "destination": remote,
            "server": server,
            "port": port,
            "duration_s": duration_s,
            "mptcp": sockets.is_mptcp(sock),
            "subflows": sent.most_subflows,
            "congestion": sockets.congestion(sock),
            "sndbuf_bytes": sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
            "bytes_sent": sent.bytes,
        }
        _abort(sock)
    if block_bytes is not None:
        # Here, not at the top: the module imports pandas, which `perf matrix` and `perf gain`
        # would otherwise pay for before they read a record.
        from mptcplab.analysis.latency import latency_summary

        latencies = block_latencies_ms(
            answer.pop("block_done_ns"), answer.pop("first_byte_ns") - offset_ns, sent, block_bytes
        )
        record |= {
            "block_bytes": block_bytes,
            "clock_offset_ns": offset_ns,
            "clock_uncertainty_ns": uncertainty_ns,
            "latency_ms": latency_summary(np.asarray(latencies)),
            "block_latencies_ms": latencies,
        }
    return record | answer


def _handshake(sock: socket.socket, duration_s: float, block_bytes: int | None) -> tuple[int, int]:
    """Send the hello and read the server's clock as many times as it says; return (server
    clock − ours, the bound on that offset's error), both 0 when the server shares this host's
    clock."""
    samples = []
    reply = b""
    ours = wire.boot_id()
    same_clock = False
    for round_ in range(wire.sync_rounds(block_bytes)):
        before = time.monotonic_ns()
        sock.sendall(wire.hello(duration_s, block_bytes) if round_ == 0 else wire.SYNC)
        while (found := wire.split_line(reply)) is None:
            chunk = sock.recv(wire.MAX_LINE)
            if not chunk:
                raise wire.WireError("the server closed the connection before it was ready")
            reply += chunk
        after = time.monotonic_ns()
        line, reply = found
        server_ns, boot = wire.parse_clock(line)
        same_clock = bool(boot) and boot == ours
        samples.append((after - before, server_ns - (before + after) // 2))
    if same_clock:
        return 0, 0
    trip, offset = min(samples)
    return offset, trip // 2


@dataclass
class Sent:
    """What the sender did: bytes written, most subflows seen, the server's answer, and for
    blocks, each send call that wrote something: the stream offset it started at and when."""

    bytes: int = 0
    most_subflows: int | None = None
    answer: dict[str, Any] = field(default_factory=dict)
    call_offsets: list[int] = field(default_factory=list)
    call_ns: list[int] = field(default_factory=list)


def _send_until_answered(sock: socket.socket, duration_s: float, block_bytes: int | None) -> Sent:
    sock.setblocking(False)
    data = memoryview(bytes(WRITE_CHUNK))
    sent = Sent(most_subflows=sockets.most_subflows(sock, None))
    # The answer lists every block and may run to megabytes: gathered in one buffer and only
    # each new chunk searched for the line end, not the whole so far.
    reply = bytearray()
    now = time.monotonic()
    give_up, next_look = now + duration_s + ANSWER_TIMEOUT_S, now + 1.0
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        while True:
            for _, events in selector.select(timeout=1.0):
                if events & selectors.EVENT_READ:
                    chunk = sock.recv(READ_CHUNK)
                    if not chunk:
                        raise wire.WireError("the server closed the connection without answering")
                    reply += chunk
                    if b"\n" in chunk:
                        sent.answer = wire.parse_answer(bytes(reply[: reply.index(b"\n")]))
                        return sent
                if events & selectors.EVENT_WRITE:
                    at = time.monotonic_ns()
                    with contextlib.suppress(BlockingIOError):
                        n = sock.send(data)
                        if block_bytes is not None and n:
                            sent.call_offsets.append(sent.bytes)
                            sent.call_ns.append(at)
                        sent.bytes += n
            now = time.monotonic()
            if now >= next_look:
                next_look = now + 1.0
                sent.most_subflows = sockets.most_subflows(sock, sent.most_subflows)
            if now >= give_up:
                raise TimeoutError("no answer from the server")


def block_latencies_ms(
    done_ns: list[int], first_byte_ns: int, sent: Sent, block_bytes: int
) -> list[float]:
    """Latency of each completed block: ``done_ns`` are the server's completion times after
    its first data byte, ``first_byte_ns`` that byte's time on this host's clock.

    Block k > 0 starts when the call that wrote block k−1's last byte did, as it would for an
    application writing one block at a time (the simulator's stamp, and spec §5.6's): a block
    that begins a later call waited for room in the send buffer, and that wait is its latency.
    Block 0 starts with the first call."""
    # Vectorised: a small block over a fast path makes millions of them.
    previous_ends = np.maximum(np.arange(len(done_ns), dtype=np.int64) * block_bytes - 1, 0)
    offsets = np.asarray(sent.call_offsets, dtype=np.int64)
    calls = np.searchsorted(offsets, previous_ends, "right") - 1
    call_ns = np.asarray(sent.call_ns, dtype=np.int64)[calls]
    done = np.asarray(done_ns, dtype=np.int64)
    latencies: list[float] = np.round((first_byte_ns - call_ns + done) / 1e6, 3).tolist()
    return latencies


def _abort(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
