"""Templates of the CoNEXT 2013 experimental-design study (Paasch, Khalili, Bonaventure, "On the
Benefits of Applying Experimental Design to Improve Multipath TCP"; spec §4.6, §5.1).

- :func:`two_path`: two hosts joined by two disjoint paths, one bottleneck each, one subflow per
  path, a bulk transfer of 60 s. Factors per bottleneck: capacity, propagation RTT, queuing delay
  of a drop-tail buffer, random loss.
- :func:`single_path`: the same network with one TCP connection on one path — the reference that
  gives the measured C_i of the aggregation benefit.
- :func:`three_bottleneck`: the congestion-balancing study: three bottlenecks, three MPTCP
  sessions, each with a one-hop and a two-hop subflow.
"""

from __future__ import annotations

from typing import Any, get_args

from mptcplab.errors import UserError
from mptcplab.scenario.model import MAX_DELAY_MS, CubicVariant, DrsVariant, Scenario
from mptcplab.scenario.templates._common import (
    CLOCK_LIMIT,
    AppArg,
    application,
    boolean,
    build,
    choice,
    droptail_queuing_delay,
    integer,
    number,
    per_path,
    receive_buffer,
)

CC = ("reno", "cubic", "lia", "olia", "balia")
SCHEDULERS = ("minrtt", "roundrobin", "redundant", "linger")
PENALIZATION = ("off", "nsdi12", "conext13")


def _links(
    prefix: str,
    n: int,
    capacity_mbps: Any,
    rtt_ms: Any,
    queuing_delay_ms: Any,
    loss: Any,
    jitter_ms: Any = 0.0,
) -> list[dict[str, Any]]:
    caps = per_path("capacity_mbps", capacity_mbps, n, positive=True)
    # Each link's one-way delay is half the RTT.
    rtts = per_path("rtt_ms", rtt_ms, n, minimum=0.0, maximum=2 * MAX_DELAY_MS, why=CLOCK_LIMIT)
    queues = per_path("queuing_delay_ms", queuing_delay_ms, n, minimum=0.0)
    losses = per_path("loss", loss, n, minimum=0.0, below=1.0, why=" (a probability)")
    jitters = per_path(
        "jitter_ms", jitter_ms, n, minimum=0.0, maximum=MAX_DELAY_MS, why=CLOCK_LIMIT
    )
    return [
        {
            "id": f"{prefix}{k}",
            "capacity_mbps": caps[k],
            # The reverse direction has the same delay, so the propagation RTT is twice this.
            "delay_ms": rtts[k] / 2.0,
            "queue": droptail_queuing_delay(caps[k], queues[k], field=f"queuing_delay_ms[{k}]"),
            "loss": losses[k],
            # Left out when zero (the link's default): scenarios written out stay as before.
            **({"jitter_ms": jitters[k]} if jitters[k] > 0.0 else {}),
        }
        for k in range(n)
    ]


def _run(duration_s: Any, warmup_s: Any, seed: Any) -> dict[str, Any]:
    return {
        "duration_s": number("duration_s", duration_s),
        "warmup_s": number("warmup_s", warmup_s),
        "seed": integer("seed", seed, minimum=0),
    }


def _mptcp_options(
    scheduler: Any, penalization: Any, opportunistic_retransmit: Any
) -> dict[str, Any]:
    return {
        "scheduler": choice("scheduler", scheduler, SCHEDULERS),
        "penalization": choice("penalization", penalization, PENALIZATION),
        "opportunistic_retransmit": boolean("opportunistic_retransmit", opportunistic_retransmit),
    }


def _tcp_options(
    loss_detection: Any,
    cwnd_limited_check: Any,
    prr: Any,
    slow_start_after_idle: Any,
    cubic_variant: Any,
    drs_variant: Any,
    delayed_ack: Any,
) -> dict[str, Any]:
    """The flow's ``tcp`` table for ``loss_detection``, ``cwnd_limited_check``, ``prr``,
    ``slow_start_after_idle``, ``cubic_variant``, ``drs_variant`` and ``delayed_ack``: only what
    differs from the defaults, which ``TcpOptions`` fills in."""
    tcp: dict[str, Any] = {}
    detection = choice("loss_detection", loss_detection, ("fack", "rack"))
    if detection != "fack":
        tcp["loss_detection"] = detection
    check = choice("cwnd_limited_check", cwnd_limited_check, ("per_ack", "per_round"))
    if check != "per_ack":
        tcp["cwnd_limited_check"] = check
    if boolean("prr", prr):
        tcp["prr"] = True
    if boolean("slow_start_after_idle", slow_start_after_idle):
        tcp["slow_start_after_idle"] = True
    variant = choice("cubic_variant", cubic_variant, get_args(CubicVariant))
    if variant != "rfc9438":
        tcp["cubic_variant"] = variant
    drs = choice("drs_variant", drs_variant, get_args(DrsVariant))
    if drs != "classic":
        tcp["drs_variant"] = drs
    if boolean("delayed_ack", delayed_ack):
        tcp["delayed_ack"] = True
    return {"tcp": tcp} if tcp else {}


def two_path(
    *,
    capacity_mbps: Any = (10.0, 10.0),
    rtt_ms: Any = (20.0, 20.0),
    queuing_delay_ms: Any = (50.0, 50.0),
    loss: Any = (0.0, 0.0),
    jitter_ms: Any = (0.0, 0.0),
    cc: str = "lia",
    scheduler: str = "minrtt",
    rcvbuf: str | int = "auto",
    penalization: str = "conext13",
    opportunistic_retransmit: bool = True,
    duration_s: float = 60.0,
    warmup_s: float = 0.0,
    seed: int = 1,
    protocol: str = "mptcp",
    app: AppArg = "bulk",
    loss_detection: str = "fack",
    cwnd_limited_check: str = "per_ack",
    prr: bool = False,
    slow_start_after_idle: bool = False,
    cubic_variant: str = "rfc9438",
    drs_variant: str = "classic",
    delayed_ack: bool = False,
) -> Scenario:
    """One MPTCP connection over two disjoint paths, one bottleneck each (CoNEXT 2013 §4, spec
    §4.6). Links ``path0`` and ``path1``; flow ``flow`` with one subflow per path.

    Per-path parameters take a pair (path 0, path 1) or one number for both:

    - ``capacity_mbps``: bottleneck rate, Mbit/s. Default (10, 10). The study spans 0.1–100.
    - ``rtt_ms``: propagation RTT of the uncongested path, ms; each link gets a one-way delay of
      ``rtt_ms / 2``. Default (20, 20). The study spans 0–50 (low-BDP) or 0–400 (high-BDP).
    - ``queuing_delay_ms``: the queuing delay the full drop-tail buffer adds: it holds the
      packet being sent plus this many ms of the link rate in whole full-size packets (the
      nearest number). Default (50, 50). The study spans 0–100 or 0–2000.
    - ``loss``: random loss probability per packet, in [0, 1). Default (0, 0); the loss study
      spans 0–0.025.
    - ``jitter_ms``: a delay drawn uniformly from [0, ``jitter_ms``) added to each packet's
      propagation, never reordering (the link's ``jitter_ms``). Default (0, 0), as in the
      study. A small value (0.05 ms) gives the simulator the timing noise a real network and
      the emulator have, without which a deterministic run can lock into one loss pattern
      that repeats all run long.

    Connection parameters: ``cc`` (default ``lia``; ``olia``, ``balia``, uncoupled ``reno`` or
    ``cubic``), ``scheduler`` (default ``minrtt``), ``rcvbuf`` (``"auto"`` = auto-tuning capped at
    4 MiB, default; or a fixed size in bytes), ``penalization`` (default ``conext13``),
    ``opportunistic_retransmit`` (default true), ``app`` (default ``"bulk"``, as iperf),
    ``loss_detection`` (``"fack"``, default, as the study's Linux 3.x; ``"rack"`` as Linux
    4.18 on, for comparisons with today's kernel), ``cwnd_limited_check`` (``"per_ack"``,
    default, as Linux before 3.16; ``"per_round"`` as Linux 3.16 on), ``prr`` (default false;
    true, with ``"rack"``, for the kernel's Proportional Rate Reduction: see ``TcpOptions``),
    ``slow_start_after_idle`` (default false; true restarts the window of a subflow idle for
    longer than its RTO, as Linux by default: see ``TcpOptions``), ``cubic_variant``
    (``"rfc9438"``, default, or ``"linux"`` for the kernel's CUBIC congestion avoidance: see
    ``TcpOptions``), ``drs_variant`` (``"classic"``, default, or ``"linux"`` for the receive
    buffer auto-tuning of Linux 6.16 on: see ``TcpOptions``), ``delayed_ack`` (default false:
    the receiver acknowledges every segment, as the emulator's then does with ``quickack``;
    true delays ACKs as Linux does by default, and as the study's hosts did; the coupled
    controls, which grow once per ACK as Linux's do, then grow half as often).
    Run: ``duration_s`` (default 60, as the study's iperf runs), ``warmup_s`` (default 0),
    ``seed`` (default 1). ``protocol`` must be ``mptcp``: a TCP reference is :func:`single_path`.
    """
    if protocol != "mptcp":
        raise UserError(
            f"two_path runs MPTCP over both paths, got protocol {protocol!r}; "
            "use the single_path template for a TCP reference on one path",
            field="protocol",
        )
    flow = {
        "id": "flow",
        "protocol": "mptcp",
        "cc": choice("cc", cc, CC),
        "paths": [["path0"], ["path1"]],
        "app": application("app", app),
        **receive_buffer("rcvbuf", rcvbuf),
        **_mptcp_options(scheduler, penalization, opportunistic_retransmit),
        **_tcp_options(
            loss_detection,
            cwnd_limited_check,
            prr,
            slow_start_after_idle,
            cubic_variant,
            drs_variant,
            delayed_ack,
        ),
    }
    return build(
        {
            **_run(duration_s, warmup_s, seed),
            "links": _links("path", 2, capacity_mbps, rtt_ms, queuing_delay_ms, loss, jitter_ms),
            "flows": [flow],
        }
    )


def single_path(
    *,
    path: int = 0,
    capacity_mbps: Any = (10.0, 10.0),
    rtt_ms: Any = (20.0, 20.0),
    queuing_delay_ms: Any = (50.0, 50.0),
    loss: Any = (0.0, 0.0),
    jitter_ms: Any = (0.0, 0.0),
    cc: str = "reno",
    rcvbuf: str | int = "auto",
    duration_s: float = 60.0,
    warmup_s: float = 0.0,
    seed: int = 1,
    protocol: str = "tcp",
    app: AppArg = "bulk",
    loss_detection: str = "fack",
    cwnd_limited_check: str = "per_ack",
    prr: bool = False,
    slow_start_after_idle: bool = False,
    cubic_variant: str = "rfc9438",
    drs_variant: str = "classic",
    delayed_ack: bool = False,
) -> Scenario:
    """The single-path reference of :func:`two_path`: the same two links (same parameters, same
    defaults), and one connection ``flow`` on ``path`` (0 or 1) only. Its goodput is the
    measured C_i of the aggregation benefit (spec §5.1, §8 item 9).

    ``cc`` defaults to ``reno`` (what LIA and OLIA reduce to on one path); ``protocol`` defaults
    to ``tcp`` (``mptcp`` gives an MPTCP connection with a single subflow).
    """
    k = integer("path", path)
    if k not in (0, 1):
        raise UserError(f"expected 0 or 1, got {path!r}", field="path")
    flow = {
        "id": "flow",
        "protocol": choice("protocol", protocol, ("tcp", "mptcp")),
        "cc": choice("cc", cc, CC),
        "paths": [[f"path{k}"]],
        "app": application("app", app),
        **receive_buffer("rcvbuf", rcvbuf),
        **_tcp_options(
            loss_detection,
            cwnd_limited_check,
            prr,
            slow_start_after_idle,
            cubic_variant,
            drs_variant,
            delayed_ack,
        ),
    }
    return build(
        {
            **_run(duration_s, warmup_s, seed),
            "links": _links("path", 2, capacity_mbps, rtt_ms, queuing_delay_ms, loss, jitter_ms),
            "flows": [flow],
        }
    )


def three_bottleneck(
    *,
    capacity_mbps: Any = (10.0, 10.0, 10.0),
    rtt_ms: Any = (20.0, 20.0, 20.0),
    queuing_delay_ms: Any = (50.0, 50.0, 50.0),
    loss: Any = (0.0, 0.0, 0.0),
    cc: str = "lia",
    scheduler: str = "minrtt",
    rcvbuf: str | int = "auto",
    penalization: str = "conext13",
    opportunistic_retransmit: bool = True,
    duration_s: float = 60.0,
    warmup_s: float = 0.0,
    seed: int = 1,
    app: AppArg = "bulk",
) -> Scenario:
    """The congestion-balancing scenario of CoNEXT 2013 (spec §4.6): three bottlenecks
    ``bottleneck0..2`` in a ring and three MPTCP sessions ``session0..2``. Session i has a
    one-hop subflow on bottleneck i and a two-hop subflow over bottlenecks i+1 and i+2 (mod 3),
    so every bottleneck carries one one-hop and two two-hop subflows. With equal capacities the
    optimum sends nothing on the two-hop subflows and reaches the sum of the capacities; the
    study's metric is aggregate goodput / that bound.

    Per-bottleneck parameters take three numbers or one for all: ``capacity_mbps`` (default 10),
    ``rtt_ms`` (propagation RTT across one bottleneck; one-way delay ``rtt_ms / 2``, so a two-hop
    subflow's propagation RTT is the sum of its two; default 20), ``queuing_delay_ms``
    (the queuing delay the full drop-tail buffer adds, as in :func:`two_path`; default 50),
    ``loss`` (default 0). Connection parameters and defaults as in :func:`two_path` (``cc``
    default ``lia``; the study also ran ``olia`` and uncoupled ``reno``).
    """
    cc_value = choice("cc", cc, CC)
    app_value = application("app", app)
    buffers = receive_buffer("rcvbuf", rcvbuf)
    options = _mptcp_options(scheduler, penalization, opportunistic_retransmit)
    flows = [
        {
            "id": f"session{i}",
            "protocol": "mptcp",
            "cc": cc_value,
            "paths": [
                [f"bottleneck{i}"],
                [f"bottleneck{(i + 1) % 3}", f"bottleneck{(i + 2) % 3}"],
            ],
            "app": app_value,
            **buffers,
            **options,
        }
        for i in range(3)
    ]
    return build(
        {
            **_run(duration_s, warmup_s, seed),
            "links": _links("bottleneck", 3, capacity_mbps, rtt_ms, queuing_delay_ms, loss),
            "flows": flows,
        }
    )
