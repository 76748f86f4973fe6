"""``mptcplab perf server``: receive transfers, time them, answer with what arrived.

One listening socket, MPTCP where the kernel offers it (an MPTCP listener accepts plain TCP
clients too, by fallback), dual-stack when bound to ``::``. Each connection is read in its own
thread as fast as the kernel delivers; goodput is measured here, at the receiver, over the
time the client's hello asks for, from the first byte read.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mptcplab.backends.perf import sockets, wire
from mptcplab.backends.perf.sockets import PerfError

READ_CHUNK = 256 * 1024
#: A client silent for this long is gone; its connection is closed without an answer.
IDLE_TIMEOUT_S = 60.0
#: How long a client may keep sending after the answer before the server closes anyway.
DRAIN_TIMEOUT_S = 10.0
_POLL_S = 0.2


def receive(conn: socket.socket, clock_id: str) -> dict[str, Any]:
    """Read one transfer for the time its hello asks, from the first data byte read; return
    the answer for the client. ``clock_id`` names this host's CLOCK_MONOTONIC (its boot id)."""
    conn.settimeout(IDLE_TIMEOUT_S)
    buffer = bytearray(READ_CHUNK)
    view = memoryview(buffer)
    head = b""
    while (found := wire.split_line(head)) is None:
        n = conn.recv_into(view)
        if n == 0:
            raise wire.WireError("the client closed before its hello")
        head += bytes(view[:n])
    line, early = found
    hello = wire.parse_hello(line)
    block: int | None = hello.get("block_bytes")
    conn.sendall(wire.clock(time.monotonic_ns(), clock_id))
    for _ in range(hello["sync_rounds"] - 1):
        while len(early) < len(wire.SYNC):
            n = conn.recv_into(view, len(wire.SYNC) - len(early))
            if n == 0:
                raise wire.WireError("the client closed while reading clocks")
            early += bytes(view[:n])
        if early != wire.SYNC:
            raise wire.WireError("the client sent data before the clocks were read")
        conn.sendall(wire.clock(time.monotonic_ns(), clock_id))
        early = b""
    if early:
        raise wire.WireError("the client sent data before the clocks were read")
    n = conn.recv_into(view)
    first_ns = time.monotonic_ns()
    end_ns = first_ns + int(float(hello["duration_s"]) * 1e9)
    received, last_ns = n, first_ns
    # For blocks, the bytes read so far and the time, after each read: which read completed
    # which block is worked out at the end, as a per-block step here would slow the reading
    # it measures.
    read_bytes: list[int] = []
    read_ns: list[int] = []
    most_subflows = sockets.most_subflows(conn, None)
    next_look = first_ns + 1_000_000_000
    while n and last_ns < end_ns:
        if block is not None:
            read_bytes.append(received)
            read_ns.append(last_ns)
        n = conn.recv_into(view)
        received += n
        last_ns = time.monotonic_ns()
        if last_ns >= next_look:
            next_look = last_ns + 1_000_000_000
            most_subflows = sockets.most_subflows(conn, most_subflows)
    seconds = (last_ns - first_ns) / 1e9
    answer = {
        "bytes_received": received,
        "receive_s": seconds,
        "goodput_mbps": received * 8 / seconds / 1e6 if seconds > 0 else 0.0,
        "complete": last_ns >= end_ns,
        "server_mptcp": sockets.is_mptcp(conn),
        "server_subflows": most_subflows,
        "server_rcvbuf_bytes": conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
    }
    if block is not None:
        answer |= {
            "first_byte_ns": first_ns,
            "block_done_ns": blocks_done_ns(read_bytes, read_ns, block, first_ns),
        }
    return answer


def blocks_done_ns(
    read_bytes: list[int], read_ns: list[int], block: int, first_ns: int
) -> list[int]:
    """When each block had been read in full, in ns after ``first_ns``: the time of the first
    read after which ``read_bytes`` (bytes read so far) covers the block's end."""
    if not read_bytes:
        return []
    ends = np.arange(1, read_bytes[-1] // block + 1, dtype=np.int64) * block
    reads = np.searchsorted(np.asarray(read_bytes, dtype=np.int64), ends, "left")
    done: list[int] = (np.asarray(read_ns, dtype=np.int64)[reads] - first_ns).tolist()
    return done


def serve_connection(conn: socket.socket, clock_id: str | None = None) -> dict[str, Any]:
    """Measure one transfer, answer it, and wait for the client to let go; returns the answer
    (``{"error": ...}`` when the transfer failed)."""
    try:
        answer = receive(conn, wire.boot_id() if clock_id is None else clock_id)
    except (OSError, wire.WireError) as exc:
        answer = {"error": str(exc) or type(exc).__name__}
    with contextlib.suppress(OSError):
        conn.sendall(wire.encode(answer))
        conn.shutdown(socket.SHUT_WR)
        _drain(conn)
    return answer


def _drain(conn: socket.socket) -> None:
    """Discard what the client still sends until it aborts or closes (after our answer), for
    ``DRAIN_TIMEOUT_S`` at most in all: a sender that never stops (not a perf client) does
    not keep the connection and its thread."""
    buffer = bytearray(READ_CHUNK)
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    with contextlib.suppress(OSError):
        while (left := deadline - time.monotonic()) > 0:
            conn.settimeout(left)
            if not conn.recv_into(buffer):
                return


class PerfServer:
    """Listen on ``host``:``port`` (``port`` 0: any free port, see :attr:`port`) until
    :meth:`shutdown`; ``on_transfer`` is called with each answer (and the peer's address).
    ``clock_id`` names the clock the server reports (default: this host's boot id; a test
    gives another to play a server on a host of its own)."""

    def __init__(
        self,
        host: str = "::",
        port: int = wire.DEFAULT_PORT,
        *,
        rcvbuf_bytes: int | None = None,
        clock_id: str | None = None,
        on_transfer: Callable[[tuple, dict[str, Any]], None] | None = None,
    ) -> None:
        family = sockets.family_of(host)
        try:
            self._listener = sockets.stream_socket(family, "mptcp")
            self.transport: sockets.Transport = "mptcp"
        except PerfError:
            self._listener = sockets.stream_socket(family, "tcp")
            self.transport = "tcp"
        try:
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                # Dual stack: IPv4 clients reach "::" as ::ffff:a.b.c.d.
                self._listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            # Set on the listener so the window scale offered in the handshake fits it.
            sockets.set_buffers(self._listener, sndbuf=None, rcvbuf=rcvbuf_bytes)
            self._listener.bind((host, port))
            self._listener.listen(64)
        except OSError as exc:
            self._listener.close()
            raise PerfError(f"cannot listen on [{host}]:{port}: {exc.strerror}") from None
        self._listener.settimeout(_POLL_S)
        self.host = host
        self.port = int(self._listener.getsockname()[1])
        self._on_transfer = on_transfer
        self._clock_id = wire.boot_id() if clock_id is None else clock_id
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def serve_forever(self) -> None:
        with self._listener:
            while not self._stop.is_set():
                try:
                    conn, peer = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    if self._stop.is_set():
                        break
                    raise
                thread = threading.Thread(target=self._serve, args=(conn, peer), daemon=True)
                thread.start()
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def _serve(self, conn: socket.socket, peer: tuple) -> None:
        with conn:
            answer = serve_connection(conn, self._clock_id)
        if self._on_transfer is not None:
            self._on_transfer(peer, answer)

    def shutdown(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2.0)
