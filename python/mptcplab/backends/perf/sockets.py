"""TCP or MPTCP, chosen per socket (IPPROTO_MPTCP, Linux 5.6+), and what the kernel made of it.

An MPTCP socket whose peer does not answer with MP_CAPABLE falls back to plain TCP silently;
``TCP_IS_MPTCP`` tells the two apart, and ``MPTCP_INFO`` counts the subflows
(include/uapi/linux/mptcp.h: ``mptcpi_subflows`` is the first byte and counts the subflows
added to the initial one).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from pathlib import Path
from typing import Literal

Transport = Literal["tcp", "mptcp"]

IPPROTO_MPTCP = getattr(socket, "IPPROTO_MPTCP", 262)
SOL_MPTCP = 284
MPTCP_INFO = 1
TCP_IS_MPTCP = 43
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
_AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


class PerfError(Exception):
    """A transfer that the network or this machine refused (no MPTCP, unreachable host, a
    congestion control the kernel lacks); the message says which and where."""


def stream_socket(family: socket.AddressFamily, transport: Transport) -> socket.socket:
    proto = IPPROTO_MPTCP if transport == "mptcp" else socket.IPPROTO_TCP
    try:
        return socket.socket(family, socket.SOCK_STREAM, proto)
    except OSError as exc:
        if transport == "mptcp" and exc.errno in (
            errno.EPROTONOSUPPORT,
            errno.ENOPROTOOPT,
            errno.EINVAL,
        ):
            raise PerfError(
                "this kernel refuses MPTCP sockets (needs Linux 5.6+ with "
                "sysctl net.mptcp.enabled=1)"
            ) from None
        raise PerfError(f"cannot open a {transport.upper()} socket: {exc.strerror}") from None


def is_mptcp(sock: socket.socket) -> bool:
    """Whether the connection runs MPTCP (False after a fallback to TCP)."""
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, TCP_IS_MPTCP) == 1
    except OSError:
        return False


def subflows(sock: socket.socket) -> int | None:
    """Subflows of an MPTCP connection, the initial one included; None for plain TCP."""
    try:
        info = sock.getsockopt(SOL_MPTCP, MPTCP_INFO, 64)
    except OSError:
        return None
    return info[0] + 1 if info else None


def most_subflows(sock: socket.socket, seen: int | None) -> int | None:
    """The larger of ``seen`` and the connection's subflows now: subflows come and go, a
    transfer keeps the most it had."""
    now = subflows(sock)
    return seen if now is None else max(seen or 0, now)


def set_congestion(sock: socket.socket, name: str) -> None:
    try:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, name.encode())
    except OSError:
        try:
            offered = _AVAILABLE_CC.read_text().split()
        except OSError:
            offered = []
        raise PerfError(
            f"congestion control {name!r} is not available in this kernel"
            + (f" (available: {', '.join(offered)})" if offered else "")
        ) from None


def congestion(sock: socket.socket) -> str:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16)
    return raw.split(b"\0", 1)[0].decode()


def set_buffers(sock: socket.socket, *, sndbuf: int | None, rcvbuf: int | None) -> None:
    """Fixed buffers. The kernel doubles the value for its bookkeeping and caps it at
    net.core.[rw]mem_max unless the process may force it (root), so the forcing option is
    tried first; the record keeps what the kernel granted."""
    for size, force, plain in (
        (sndbuf, getattr(socket, "SO_SNDBUFFORCE", 32), socket.SO_SNDBUF),
        (rcvbuf, getattr(socket, "SO_RCVBUFFORCE", 33), socket.SO_RCVBUF),
    ):
        if size is None:
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, force, size)
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, plain, size)


def resolve(
    host: str, port: int, family: socket.AddressFamily | None
) -> tuple[socket.AddressFamily, tuple]:
    """The first address of ``host`` (of ``family`` when given) to connect to."""
    try:
        found = socket.getaddrinfo(host, port, family or 0, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        kind = {socket.AF_INET: "IPv4 ", socket.AF_INET6: "IPv6 "}.get(family or 0, "")
        raise PerfError(f"{host}: no {kind}address ({exc.strerror})") from None
    af, _, _, _, address = found[0]
    return socket.AddressFamily(af), address


def ip_version(address: str) -> int | None:
    """4 or 6 for an address literal; None for a host name (either family)."""
    try:
        return ipaddress.ip_address(address).version
    except ValueError:
        return None


def family_of(address: str) -> socket.AddressFamily:
    """The family of an address literal; IPv4 for a host name."""
    return socket.AF_INET6 if ip_version(address) == 6 else socket.AF_INET
