"""The responsiveness scenario of draft-walid-mptcp-congestion-control-04 §5.2 (spec §2.6): how
quickly an MPTCP connection takes back a path that competing TCP flows have left.

From the draft: one MPTCP connection over two 20 Mbit/s paths of about 10 ms one way that merge
into a 40 Mbit/s server link, 200 s long; five TCP flows share path 2 from 40 s to 80 s; the
measure is the time path 2's window takes to regain its mean after they leave
(:mod:`mptcplab.analysis.recovery`, metric ``cwnd_recovery_s.mptcp``).

The data flows toward the server, as drawn (the MPTCP host and the TCP sources on the left, the
server on the right): the paths' two 20 Mbit/s links are the bottlenecks and the 40 Mbit/s server
link, their sum, carries what they pass without a queue. (Sent from the server, every flow would
first meet at the server link, a second, shared bottleneck: at the default settings it dropped
150-230 packets a run.)

What the draft leaves open, and what this template chooses: each path's one-way delay is split
evenly between its access link and the server link; every link has a drop-tail queue of
``queue_packets`` (default 50, the default queue of Dummynet, the emulator the draft's testbed
names in §5.1); the TCP flows cross the whole of path 2, server link included, and run Reno
(``tcp_cc``); receivers delay ACKs as Linux's do. The window's reference mean is taken from the
end of the warm-up (default 10 s, past slow start) until the TCP flows start.
"""

from __future__ import annotations

from typing import Any, get_args

from mptcplab.errors import UserError
from mptcplab.scenario.model import (
    MAX_DELAY_MS,
    MAX_FLOWS,
    CcKind,
    DropTailQueue,
    Scenario,
    SchedulerKind,
)
from mptcplab.scenario.templates._common import (
    CLOCK_LIMIT,
    U64_MAX,
    boolean,
    build,
    choice,
    integer,
    number,
)

# The TCP flows run an uncoupled control; the MPTCP connection any.
TCP_CC = ("reno", "cubic")


def responsiveness(
    *,
    cc: str = "balia",
    scheduler: str = "minrtt",
    path_mbps: float = 20.0,
    server_mbps: float = 40.0,
    one_way_ms: float = 10.0,
    queue_packets: int = 50,
    cross_flows: int = 5,
    cross_start_s: float = 40.0,
    cross_stop_s: float = 80.0,
    tcp_cc: str = "reno",
    delayed_ack: bool = True,
    duration_s: float = 200.0,
    warmup_s: float = 10.0,
    trace_interval_ms: float = 100.0,
    seed: int = 1,
) -> Scenario:
    """One MPTCP connection (flow ``mptcp``, congestion control ``cc``, default ``balia``) over
    two paths of ``path_mbps`` (links ``path1``, ``path2``, default 20 Mbit/s) that merge into
    the server link ``server`` of ``server_mbps`` (default 40); each path is ``one_way_ms`` one
    way (default 10), half on its own link and half on the server link. ``cross_flows`` TCP
    flows (flow ``cross``, default 5, congestion control ``tcp_cc``) run over path 2 from
    ``cross_start_s`` to ``cross_stop_s`` (default 40 s to 80 s). Every link has a drop-tail
    queue of ``queue_packets`` (default 50). The run lasts ``duration_s`` (default 200 s), is
    measured after ``warmup_s`` (default 10 s) and traces every window each
    ``trace_interval_ms`` (default 100 ms), the resolution of ``cwnd_recovery_s``.
    ``scheduler``: the MPTCP scheduler (default ``minrtt``, the draft's out-of-tree kernel's;
    ``linger`` is the upstream kernel's, which the emulator runs).
    """
    path = number("path_mbps", path_mbps, positive=True)
    server = number("server_mbps", server_mbps, positive=True)
    # Half of it on each of the path's two links.
    half = (
        number("one_way_ms", one_way_ms, minimum=0.0, maximum=2 * MAX_DELAY_MS, why=CLOCK_LIMIT)
        / 2.0
    )
    queue = DropTailQueue(
        packets=integer("queue_packets", queue_packets, minimum=1, maximum=U64_MAX)
    )
    start = number("cross_start_s", cross_start_s, minimum=0.0)
    stop = number("cross_stop_s", cross_stop_s, minimum=0.0)
    duration = number("duration_s", duration_s, positive=True)
    warmup = number("warmup_s", warmup_s, minimum=0.0)
    if not warmup < start < stop < duration:
        raise UserError(
            "expected warmup_s < cross_start_s < cross_stop_s < duration_s (the window's mean "
            "is taken before the TCP flows start, its recovery after they stop), got "
            f"{warmup:g}, {start:g}, {stop:g}, {duration:g}",
            field="cross_stop_s",
        )
    delack = boolean("delayed_ack", delayed_ack)
    links: list[dict[str, Any]] = [
        {"id": "path1", "capacity_mbps": path, "delay_ms": half, "queue": queue},
        {"id": "path2", "capacity_mbps": path, "delay_ms": half, "queue": queue},
        {"id": "server", "capacity_mbps": server, "delay_ms": half, "queue": queue},
    ]
    flows: list[dict[str, Any]] = [
        {
            "id": "mptcp",
            "protocol": "mptcp",
            "cc": choice("cc", cc, get_args(CcKind)),
            "scheduler": choice("scheduler", scheduler, get_args(SchedulerKind)),
            "paths": [["path1", "server"], ["path2", "server"]],
            "tcp": {"delayed_ack": delack},
        },
        {
            "id": "cross",
            "protocol": "tcp",
            "cc": choice("tcp_cc", tcp_cc, TCP_CC),
            "paths": [["path2", "server"]],
            # The MPTCP connection is the run's other flow.
            "count": integer("cross_flows", cross_flows, minimum=1, maximum=MAX_FLOWS - 1),
            "start_s": start,
            "stop_s": stop,
            "tcp": {"delayed_ack": delack},
        },
    ]
    return build(
        {
            "duration_s": duration,
            "warmup_s": warmup,
            "seed": integer("seed", seed, minimum=0),
            "links": links,
            "flows": flows,
            "trace": ["cwnd"],
            "trace_interval_ms": number("trace_interval_ms", trace_interval_ms, positive=True),
        }
    )
