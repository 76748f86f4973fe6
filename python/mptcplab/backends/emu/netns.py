"""Network namespaces and their configuration, through iproute2 (``ip``).

Each host of a run is a namespace ``mptcplab-<run id>-c<g>`` / ``-s<g>`` (see
:mod:`.addressing`). Its interfaces are TUN devices that linkem creates inside it; this module
adds the addresses, policy routing (one table per source address, so each subflow leaves by its
own path), the MPTCP limits and ``subflow`` endpoints, and the per-namespace sysctls.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence

from mptcplab.backends.emu.addressing import TABLE_BASE, Group
from mptcplab.scenario.model import FlowSpec

IP_TIMEOUT_S = 30.0


class EmulatorError(RuntimeError):
    """The machine refused a step of building or running the emulated network."""


def ip(*args: str, namespace: str | None = None, stdin: str | None = None) -> str:
    cmd = ["ip"]
    if namespace is not None:
        cmd += ["-n", namespace]
    cmd += list(args)
    proc = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=False
    )
    if proc.returncode != 0:
        shown = " ".join(cmd) if stdin is None else f"{' '.join(cmd)} <<{stdin.strip()!r}"
        raise EmulatorError(f"{shown} failed: {proc.stderr.strip()}")
    return proc.stdout


def batch(namespace: str, commands: Sequence[str]) -> None:
    """Run several ``ip`` commands in one process (``ip -n NS -batch -``)."""
    if commands:
        ip("-batch", "-", namespace=namespace, stdin="\n".join(commands) + "\n")


def sysctl(namespace: str, settings: dict[str, str]) -> None:
    """Set per-namespace sysctls (net.* values belong to the namespace that writes them)."""
    if not settings:
        return
    args = [f"{k}={v}" for k, v in settings.items()]
    proc = subprocess.run(
        ["ip", "netns", "exec", namespace, "sysctl", "-q", "-w", *args],
        capture_output=True,
        text=True,
        timeout=IP_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        raise EmulatorError(f"sysctl in {namespace} failed: {proc.stderr.strip()}")


def list_namespaces() -> list[str]:
    out = ip("netns", "list")
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def add(namespace: str) -> None:
    ip("netns", "add", namespace)


def delete(namespace: str) -> bool:
    """Remove a namespace; False if it did not exist."""
    try:
        ip("netns", "delete", namespace)
    except EmulatorError:
        return False
    return True


def delete_all(namespaces: Iterable[str]) -> list[str]:
    existing = set(list_namespaces())
    removed = []
    for ns in namespaces:
        if ns in existing and delete(ns):
            removed.append(ns)
    return removed


def _buffers(low: int, default: int, cap: int) -> str:
    return f"{low} {min(default, cap)} {cap}"


#: Linux advertises its receive memory times a scaling ratio, the payload over the memory
#: (truesize) of the segments it has received (`tcp_measure_rcv_mss`, `tcp_win_from_space`,
#: 6.7 on). On the emulator's TUN devices a full segment arrives in an skb of 2304 bytes: 1448 of
#: payload for TCP, a ratio of 160/256, and 1424 for MPTCP, whose DSS option takes 24, 158/256
#: (measured: a receiver at an 8 MiB cap advertised 5,242,880 bytes over TCP and 5,177,344 over
#: MPTCP, exactly those). A scenario's receive sizes are window, fixed or as the auto-tuning cap
#: (as in the simulator), so each becomes 256/160 times as much memory; with the factor 2 used
#: before, the kernel's window was 1.25 times the scenario's. (The send side has no such
#: factor: the simulator models a send buffer as the memory the kernel's sk_sndbuf limits, a
#: bulk sender's large buffers being charged about their payload; see fixed_send_request.)
RECEIVE_MEMORY_PER_WINDOW_BYTE = 256 / 160
_SYSCTL_INT_MAX = 2**31 - 1


def _receive_memory(window_cap: int) -> int:
    return min(round(RECEIVE_MEMORY_PER_WINDOW_BYTE * window_cap), _SYSCTL_INT_MAX)


def fixed_receive_request(window: int) -> int:
    """The SO_RCVBUF(FORCE) value that gives a fixed receive window of ``window`` bytes: the
    kernel doubles what it is given (its own convention for memory against payload)."""
    return _receive_memory(window) // 2


def fixed_send_request(sndbuf: int) -> int:
    """The SO_SNDBUF(FORCE) value that gives a send buffer of ``sndbuf`` bytes: the kernel
    doubles what it is given (`sk_setsockopt`), and the scenario's size, as the simulator's, is
    the doubled value, the memory `sk_stream_memory_free` holds the queue to. An odd size is
    rounded up to the next even one."""
    return (sndbuf + 1) // 2


def window_of_receive_memory(memory: int) -> int:
    """The payload window that ``memory`` bytes of receive memory hold (the inverse of the
    mapping above), for reporting the kernel's SO_RCVBUF and rmem_alloc in the scenario's terms."""
    return round(memory / RECEIVE_MEMORY_PER_WINDOW_BYTE)


COMMON_SYSCTLS = {
    # IPv4 only: no router solicitations or MLD reports on the emulated links.
    "net.ipv6.conf.all.disable_ipv6": "1",
    "net.ipv6.conf.default.disable_ipv6": "1",
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.conf.default.rp_filter": "0",
    # Each connection starts from the scenario's state, not from cached metrics of the last.
    "net.ipv4.tcp_no_metrics_save": "1",
    "net.mptcp.enabled": "1",
}


def _sack(flow: FlowSpec) -> dict[str, str]:
    """SACK as the scenario has it: without it (``tcp.sack = false``) the kernel recovers by
    NewReno, as the simulator does. Set on both ends, either of which can refuse the option."""
    return {"net.ipv4.tcp_sack": "1" if flow.tcp.sack else "0"}


def configure_client(group: Group, *, sndbuf_cap: int) -> None:
    """Addresses, per-source routing towards the server, MPTCP endpoints and limits."""
    flow = group.flow
    server = group.server_iface.address
    initcwnd = f" initcwnd {flow.tcp.initial_window}"
    cmds = ["link set lo up"]
    for p, iface in enumerate(group.client_ifaces):
        table = TABLE_BASE + p
        cmds += [
            f"address add {iface.address}/32 dev {iface.name}",
            f"link set {iface.name} mtu 1500 up",
            f"rule add from {iface.address} table {table} pref {table}",
            f"route add {server}/32 dev {iface.name} src {iface.address} table {table}" + initcwnd,
        ]
    first = group.client_ifaces[0]
    cmds.append(f"route add {server}/32 dev {first.name} src {first.address}" + initcwnd)
    extra = len(group.client_ifaces) - 1
    cmds.append(f"mptcp limits set subflows {extra} add_addr_accepted 0")
    for iface in group.client_ifaces[1:]:
        cmds.append(f"mptcp endpoint add {iface.address} dev {iface.name} subflow")
    batch(group.client_ns, cmds)
    sysctl(
        group.client_ns,
        {
            **COMMON_SYSCTLS,
            "net.ipv4.tcp_wmem": _buffers(4096, 16384, sndbuf_cap),
            # The sender's window after idle follows the scenario (Linux's default is on).
            "net.ipv4.tcp_slow_start_after_idle": "1" if flow.tcp.slow_start_after_idle else "0",
            **_sack(flow),
        },
    )


def configure_server(group: Group, *, rcvbuf_cap: int, autotune: bool) -> None:
    """Address, the route back to the client, MPTCP limits and receive-side sysctls."""
    flow = group.flow
    iface = group.server_iface
    # quickack 1 on the route makes the receiver ACK every segment (RTAX_QUICKACK), the
    # scenario's default; otherwise Linux's delayed ACKs apply.
    quickack = "" if flow.tcp.delayed_ack else " quickack 1"
    cmds = [
        "link set lo up",
        f"address add {iface.address}/32 dev {iface.name}",
        f"link set {iface.name} mtu 1500 up",
        f"route add 198.18.0.0/16 dev {iface.name} src {iface.address}" + quickack,
        f"mptcp limits set subflows {len(group.client_ifaces) - 1} add_addr_accepted 0",
    ]
    batch(group.server_ns, cmds)
    sysctl(
        group.server_ns,
        {
            **COMMON_SYSCTLS,
            "net.ipv4.tcp_rmem": _buffers(4096, 131072, _receive_memory(rcvbuf_cap)),
            "net.ipv4.tcp_moderate_rcvbuf": "1" if autotune else "0",
            **_sack(flow),
        },
    )


def tun_drops(namespace: str, device: str) -> int:
    """Packets the kernel dropped on a TUN device because linkem did not read them in time."""
    try:
        data = json.loads(ip("-s", "-j", "link", "show", "dev", device, namespace=namespace))
    except (EmulatorError, ValueError):
        return 0
    if not data:
        return 0
    stats = data[0].get("stats64") or data[0].get("stats") or {}
    return int(stats.get("tx", {}).get("dropped", 0))
