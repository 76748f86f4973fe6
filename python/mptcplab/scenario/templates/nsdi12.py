"""Template of the NSDI 2012 WiFi/3G application-latency experiment (Raiciu et al., "How Hard Can
It Be? Designing and Implementing a Deployable Multipath TCP", Fig. 7; spec §5.6).

WiFi: 8 Mbit/s, 20 ms RTT, drop-tail buffer of 80 ms (80 KB). 3G: 2 Mbit/s, 150 ms RTT, buffer of
2 s (500 KB). The application writes 8 KB blocks back to back into a 200 KB send buffer; a block's
latency runs from its write to its complete read by the receiving application. The receive
buffer is small and fixed (auto-tuning off); where it is large enough for the 3G subflow to
carry data, head-of-line blocking by that slow subflow shows, which is what the paper's
mechanisms address: M1 = opportunistic retransmission, M2 = penalising the slow subflow. At the
default 32 KiB (the paper's 32 KB) the whole window is in flight on the WiFi subflow, whose
80 KB buffer never overflows: the 3G subflow carries nothing and MPTCP is TCP over WiFi (from
128 KiB on, the 3G subflow carries data; campaigns/nsdi12-latency.toml sweeps the buffer).
"""

from __future__ import annotations

from typing import Any, get_args

from mptcplab.errors import UserError
from mptcplab.scenario.model import Scenario, TraceKind
from mptcplab.scenario.templates._common import (
    U64_MAX,
    boolean,
    buffer_bytes,
    build,
    choice,
    droptail_ms,
    integer,
    number,
)

CC = ("reno", "cubic", "lia", "olia", "balia")
TRACES: tuple[str, ...] = get_args(TraceKind)

#: Link parameters of the paper (spec §5.6): rate Mbit/s, propagation RTT ms, buffer ms.
WIFI = {"capacity_mbps": 8.0, "rtt_ms": 20.0, "buffer_ms": 80.0}
CELLULAR = {"capacity_mbps": 2.0, "rtt_ms": 150.0, "buffer_ms": 2000.0}


def wifi_3g(
    *,
    path: str | None = None,
    protocol: str | None = None,
    cc: str | None = None,
    rcvbuf_bytes: int = 32 * 1024,
    sndbuf_bytes: int = 200 * 1024,
    block_bytes: int = 8 * 1024,
    penalization: str = "nsdi12",
    opportunistic_retransmit: bool = True,
    scheduler: str = "minrtt",
    trace: Any = ("blocks",),
    duration_s: float = 100.0,
    warmup_s: float = 0.0,
    seed: int = 1,
) -> Scenario:
    """NSDI 2012 Fig. 7: one connection ``app`` writing blocks over WiFi (link ``wifi``) and 3G
    (link ``3g``), with the paper's link parameters (module docstring).

    - ``path``: ``None`` (default) uses both links; ``"wifi"`` or ``"3g"`` uses only that one —
      the TCP-over-WiFi and TCP-over-3G references.
    - ``protocol``: default ``mptcp`` over both links, ``tcp`` over one.
    - ``cc``: default ``lia`` for MPTCP, ``reno`` for TCP.
    - ``rcvbuf_bytes``: fixed receive buffer, default 32 KiB (the paper's brief says 32 KB; the
      CS244-2014 reproduction uses SO_RCVBUF = 30 KB; spec §8 item 8).
    - ``sndbuf_bytes``: fixed send buffer, default 200 KiB (the paper's 200 KB, taken as the
      kernel's buffer; a SO_SNDBUF of 200 KB would have been doubled to 400).
    - ``block_bytes``: block size, default 8 KiB.
    - ``penalization`` (default ``nsdi12``, the paper's M2; ``off`` and ``conext13`` too) and
      ``opportunistic_retransmit`` (default true, M1): "MPTCP without M1/M2" is
      ``penalization="off", opportunistic_retransmit=False``. Ignored for TCP.
    - ``trace``: traces to record, default ``("blocks",)`` for the latency distribution.
    - ``duration_s``: default 100 (the reproduction's run length); ``warmup_s`` 0; ``seed`` 1.
    """
    paths = [["wifi"], ["3g"]] if path is None else [[choice("path", path, ("wifi", "3g"))]]
    proto = "mptcp" if path is None else "tcp"
    if protocol is not None:
        proto = choice("protocol", protocol, ("tcp", "mptcp"))
    if proto == "tcp" and len(paths) != 1:
        raise UserError(
            'a TCP reference runs over one link: give path = "wifi" or "3g"', field="protocol"
        )
    if isinstance(trace, str) or not isinstance(trace, list | tuple):
        raise UserError(f"expected a list of trace names, got {trace!r}", field="trace")
    flow: dict[str, Any] = {
        "id": "app",
        "protocol": proto,
        "paths": paths,
        "rcvbuf_bytes": buffer_bytes("rcvbuf_bytes", rcvbuf_bytes),
        "sndbuf_bytes": buffer_bytes("sndbuf_bytes", sndbuf_bytes),
        "app": {
            "kind": "blocks",
            "block_bytes": integer("block_bytes", block_bytes, minimum=1, maximum=U64_MAX),
        },
    }
    if cc is not None:
        flow["cc"] = choice("cc", cc, CC)
    pen = choice("penalization", penalization, ("off", "nsdi12", "conext13"))
    oretx = boolean("opportunistic_retransmit", opportunistic_retransmit)
    sched = choice("scheduler", scheduler, ("minrtt", "roundrobin", "redundant", "linger"))
    if proto == "mptcp":
        flow.update(penalization=pen, opportunistic_retransmit=oretx, scheduler=sched)
    links = [
        {
            "id": link_id,
            "capacity_mbps": spec["capacity_mbps"],
            "delay_ms": spec["rtt_ms"] / 2.0,
            "queue": droptail_ms(spec["buffer_ms"]),
        }
        for link_id, spec in (("wifi", WIFI), ("3g", CELLULAR))
    ]
    return build(
        {
            "duration_s": number("duration_s", duration_s),
            "warmup_s": number("warmup_s", warmup_s),
            "seed": integer("seed", seed, minimum=0),
            "links": links,
            "flows": [flow],
            "trace": [choice("trace", t, TRACES) for t in trace],
        }
    )
