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
#: Largest SO_SNDBUF / SO_RCVBUF: the kernel takes a C int.
MAX_BUFFER_BYTES = 2**31 - 1


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


def available_congestion() -> list[str]:
    """The congestion controls the kernel lists as loaded (empty when it cannot be read)."""
    try:
        return _AVAILABLE_CC.read_text().split()
    except OSError:
        return []


def _not_available(name: str, what: str = "") -> PerfError:
    offered = available_congestion()
    return PerfError(
        f"{what}{name!r} is not available here"
        + (f" (available: {', '.join(offered)})" if offered else "")
    )


def _refused(name: str, exc: Exception, what: str = "") -> PerfError:
    """Why the kernel refused congestion control ``name``: loaded but not among those a
    process without CAP_NET_ADMIN may choose (EPERM), or not there at all."""
    if isinstance(exc, PermissionError):
        return PerfError(
            f"{what}{name!r} is loaded but not allowed for this process: a process without "
            "CAP_NET_ADMIN may choose only those of net.ipv4.tcp_allowed_congestion_control"
        )
    return _not_available(name, what)


def set_congestion(sock: socket.socket, name: str) -> None:
    try:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, name.encode())
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        raise _refused(name, exc, "congestion control ") from None


def check_congestion(name: str) -> None:
    """Raise :class:`PerfError` unless this process can give a TCP socket ``name``.

    Probed on a plain TCP socket, not read from the list of loaded ones: the kernel loads a
    module on demand (for root). An MPTCP socket takes any name and its subflows quietly run
    the default when the name is unknown, so the check must come before the transfer."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, name.encode())
        except (OSError, ValueError) as exc:
            raise _refused(name, exc) from None
        # The kernel cuts a long name to the length it keeps.
        if congestion(probe) != name:
            raise _not_available(name)


def check_applied(sock: socket.socket, name: str) -> None:
    """Raise :class:`PerfError` when the connection does not run ``name`` (see
    :func:`check_congestion`); a kernel that does not tell leaves it unchecked."""
    try:
        running = congestion(sock)
    except OSError:
        return
    if running != name:
        raise PerfError(
            f"congestion control {name!r} was not applied (the connection runs {running})"
        )


def congestion(sock: socket.socket) -> str:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16)
    return raw.split(b"\0", 1)[0].decode()


def set_buffers(sock: socket.socket, *, sndbuf: int | None, rcvbuf: int | None) -> None:
    """Fixed buffers. The kernel doubles the value for its bookkeeping and caps it at
    net.core.[rw]mem_max unless the process may force it (root), so the forcing option is
    tried first; the record keeps what the kernel granted."""
    for what, size in (("sndbuf", sndbuf), ("rcvbuf", rcvbuf)):
        if size is not None and not 0 < size <= MAX_BUFFER_BYTES:
            raise ValueError(f"{what}: expected bytes in [1, {MAX_BUFFER_BYTES}], got {size}")
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
    except (socket.gaierror, UnicodeError) as exc:
        kind = {socket.AF_INET: "IPv4 ", socket.AF_INET6: "IPv6 "}.get(family or 0, "")
        raise PerfError(f"{host}: no {kind}address ({_lookup_failure(exc)})") from None
    af, _, _, _, address = found[0]
    return socket.AddressFamily(af), address


def _lookup_failure(exc: socket.gaierror | UnicodeError) -> str:
    # A name with an empty or over-long label fails in its IDNA encoding, before the lookup.
    if isinstance(exc, UnicodeError):
        return "not a valid host name: a label is empty or longer than 63 characters"
    return str(exc.strerror)


def check_local_address(address: str) -> None:
    """Raise :class:`PerfError` unless a socket of this host can be bound to ``address``."""
    try:
        infos = socket.getaddrinfo(address, 0, 0, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise PerfError(
            f"{address!r} is not an address of this host ({_lookup_failure(exc)})"
        ) from None
    af, _, _, _, where = infos[0]
    with socket.socket(af, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(where)
        except OSError as exc:
            raise PerfError(
                f"{address!r} is not an address of this host ({exc.strerror})"
            ) from None


def ip_version(address: str) -> int | None:
    """4 or 6 for an address literal; None for a host name (either family)."""
    try:
        return ipaddress.ip_address(address).version
    except ValueError:
        return None


def version_of(family: socket.AddressFamily) -> int:
    """6 for IPv6, 4 for IPv4: the number records and messages give a family."""
    return 6 if family == socket.AF_INET6 else 4


def family_of(address: str) -> socket.AddressFamily:
    """The family of an address literal; IPv4 for a host name."""
    return socket.AF_INET6 if ip_version(address) == 6 else socket.AF_INET
