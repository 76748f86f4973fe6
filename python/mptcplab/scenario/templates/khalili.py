"""Templates of draft-khalili-mptcp-performance-issues-06 (spec §5.4): three scenarios where
MPTCP with LIA is unfair or Pareto-suboptimal.

Common to all three, from the draft: every bottleneck is a RED link with the draft's profile
(:func:`red_profile`), users are long-lived bulk transfers, all paths have an RTT of about 150 ms.
The draft does not say how the 150 ms split between propagation and queueing; here ``rtt_ms`` is
the propagation RTT of every path (the spec's second option), spread over the links of each
path so that every path has the same propagation RTT. Single-path users run TCP with Reno
(``tcp_cc``); multipath users run MPTCP with ``cc`` (default ``lia``; the draft compares
``olia``). Users of one type are one flow entry with ``count`` = the number of users, so they
appear as ``type1#0`` … in reports. Warm-up and duration are our choice (the draft does not give
its run length): 120 s, of which the first 20 s are not measured.

Receivers delay ACKs (``delayed_ack``, default true): the draft measured Linux hosts, whose
receivers acknowledge every second segment or after a short timer. It matters most for the
subflows that congestion control squeezes to one or two segments per round trip, which then wait
for the timer on every segment; Linux's LIA and OLIA also add one increment per ACK.
"""

from __future__ import annotations

from typing import Any

from mptcplab.errors import UserError
from mptcplab.scenario.model import MAX_DELAY_MS, MAX_FLOWS, Scenario
from mptcplab.scenario.templates._common import (
    CLOCK_LIMIT,
    FAST_ACCESS_MBPS,
    boolean,
    build,
    choice,
    integer,
    number,
    red_profile,
    users,
)

CC = ("reno", "cubic", "lia", "olia", "balia")


def _red_link(
    link_id: str,
    capacity_mbps: float,
    delay_ms: float,
    instantaneous: bool,
    capacity_of: tuple[str, ...],
) -> dict:
    """A RED bottleneck whose capacity is the product of the parameters ``capacity_of``; the
    last of them is named when the RED profile cannot take that capacity."""
    try:
        queue = red_profile(capacity_mbps, instantaneous=instantaneous)
    except UserError as exc:
        raise UserError(
            f"link '{link_id}' of {' × '.join(capacity_of)} = {capacity_mbps:g} Mbit/s: "
            f"{exc.detail}",
            field=capacity_of[-1],
        ) from None
    return {"id": link_id, "capacity_mbps": capacity_mbps, "delay_ms": delay_ms, "queue": queue}


def _rtt(value: Any, links: int) -> float:
    """The propagation RTT, checked so that each of the ``links`` sharing it gets a one-way
    delay the clock can count."""
    return number("rtt_ms", value, minimum=0.0, maximum=links * MAX_DELAY_MS, why=CLOCK_LIMIT)


def _fast_link(link_id: str, delay_ms: float, at_least_mbps: float) -> dict:
    """An access that is never the bottleneck (its default queue is one BDP, never filled)."""
    return {
        "id": link_id,
        "capacity_mbps": max(FAST_ACCESS_MBPS, 10.0 * at_least_mbps),
        "delay_ms": delay_ms,
    }


def _users(
    flow_id: str,
    count: int,
    protocol: str,
    cc: str,
    paths: list[list[str]],
    min_ssthresh_segments: int | None = None,
) -> dict[str, Any]:
    flow: dict[str, Any] = {
        "id": flow_id,
        "protocol": protocol,
        "cc": cc,
        "paths": paths,
        "count": count,
    }
    if protocol == "mptcp" and min_ssthresh_segments is not None:
        flow["tcp"] = {"min_ssthresh_segments": min_ssthresh_segments}
    return flow


def _receivers(flows: list[dict[str, Any]], delayed_ack: Any) -> list[dict[str, Any]]:
    """Every user's receiver delays ACKs or not (RFC 5681 §4.2; Linux does by default)."""
    on = boolean("delayed_ack", delayed_ack)
    for flow in flows:
        flow.setdefault("tcp", {})["delayed_ack"] = on
    return flows


def _min_ssthresh(value: Any) -> int | None:
    """The MPTCP users' ssthresh floor in segments: ``None`` keeps the Linux default (2);
    draft-khalili-mptcp-congestion-control-05 §3 specifies 1 for OLIA with two or more paths."""
    return None if value is None else integer("min_ssthresh_segments", value, minimum=1)


def _scenario(
    links: list[dict[str, Any]],
    flows: list[dict[str, Any]],
    duration_s: Any,
    warmup_s: Any,
    seed: Any,
    delayed_ack: Any,
) -> Scenario:
    return build(
        {
            "duration_s": number("duration_s", duration_s),
            "warmup_s": number("warmup_s", warmup_s),
            "seed": integer("seed", seed, minimum=0),
            "links": links,
            "flows": _receivers(flows, delayed_ack),
        }
    )


def shared_ap(
    *,
    min_ssthresh_segments: int | None = None,
    n1: int = 10,
    n2: int = 10,
    c1_mbps: float = 1.0,
    c2_mbps: float = 1.0,
    rtt_ms: float = 150.0,
    cc: str = "lia",
    multipath: bool = True,
    tcp_cc: str = "reno",
    red_instantaneous: bool = False,
    delayed_ack: bool = True,
    duration_s: float = 120.0,
    warmup_s: float = 20.0,
    seed: int = 1,
) -> Scenario:
    """Scenario A, "MPTCP penalises TCP users" (draft-khalili-…-06 §4, spec §5.4).

    ``n1`` type-1 users (flow ``type1``, default 10; the draft uses 10 and 30) download from a
    server farm whose access link ``server`` has capacity ``n1·c1_mbps``; each has a private
    high-speed access ``access1`` and, when ``multipath`` (default true), a second subflow
    through a shared AP ``ap`` of capacity ``n2·c2_mbps`` that continues through ``server``
    (as in the draft's testbed figure). ``n2`` type-2 users (flow ``type2``, default 10) use only
    the AP, to other servers (``farm2``). ``c1_mbps``, ``c2_mbps``: per-user capacities, default
    1 Mbit/s. With ``multipath = false`` type-1 users run single-path TCP — the draft's
    "single-path" column. Expected (draft, LIA, N1 = N2 = 10): type-1 0.96, type-2 0.70 Mbit/s.

    One-way delays are ``rtt_ms/4`` on ``server``, ``ap``, ``access1`` and ``farm2``, so all
    three paths (server→access1, server→ap, farm2→ap) have a propagation RTT of ``rtt_ms``
    (default 150). ``red_instantaneous``: RED on the instantaneous queue (default: EWMA).
    ``delayed_ack``: receivers delay ACKs (default true, as on the draft's Linux hosts).

    ``min_ssthresh_segments``: ssthresh floor of the MPTCP users, segments (default: Linux's 2;
    draft-khalili-mptcp-congestion-control-05 §3 gives OLIA a floor of 1 with two paths).
    """
    n1 = integer("n1", n1, minimum=1, maximum=MAX_FLOWS)
    mss_floor = _min_ssthresh(min_ssthresh_segments)
    n2 = integer("n2", n2, minimum=1, maximum=MAX_FLOWS)
    users({"n1": n1, "n2": n2})
    c1 = number("c1_mbps", c1_mbps, positive=True)
    c2 = number("c2_mbps", c2_mbps, positive=True)
    quarter = _rtt(rtt_ms, 4) / 4.0
    inst = boolean("red_instantaneous", red_instantaneous)
    cc = choice("cc", cc, CC)
    tcp_cc = choice("tcp_cc", tcp_cc, CC)
    links = [
        _red_link("server", n1 * c1, quarter, inst, ("n1", "c1_mbps")),
        _red_link("ap", n2 * c2, quarter, inst, ("n2", "c2_mbps")),
        _fast_link("access1", quarter, n1 * c1),
        _fast_link("farm2", quarter, n2 * c2),
    ]
    if boolean("multipath", multipath):
        type1 = _users(
            "type1", n1, "mptcp", cc, [["server", "access1"], ["server", "ap"]], mss_floor
        )
    else:
        type1 = _users("type1", n1, "tcp", tcp_cc, [["server", "access1"]])
    type2 = _users("type2", n2, "tcp", tcp_cc, [["farm2", "ap"]])
    return _scenario(links, [type1, type2], duration_s, warmup_s, seed, delayed_ack)


def multihomed_isp(
    *,
    min_ssthresh_segments: int | None = None,
    n_blue: int = 15,
    n_red: int = 15,
    cx_mbps: float = 27.0,
    cy_mbps: float = 100.0,
    cz_mbps: float = 100.0,
    ct_mbps: float = 36.0,
    red_multipath: bool = False,
    rtt_ms: float = 150.0,
    cc: str = "lia",
    tcp_cc: str = "reno",
    red_instantaneous: bool = False,
    delayed_ack: bool = True,
    duration_s: float = 120.0,
    warmup_s: float = 20.0,
    seed: int = 1,
) -> Scenario:
    """Scenario B, "MPTCP penalises other MPTCP users" (draft-khalili-…-06 §5, spec §5.4).

    ISPs X, Y, Z, T, each modelled as one RED access link (``X``, ``Y``, ``Z``, ``T``) crossed
    by every flow through that ISP, with capacities ``cx_mbps`` = 27, ``cy_mbps`` = 100,
    ``cz_mbps`` = 100, ``ct_mbps`` = 36 by default. ``n_blue`` Blue users (flow ``blue``,
    default 15) are multihomed and download from servers in Z over b1 = Z→X and b2 = Z→T→Y.
    ``n_red`` Red users (flow ``red``, default 15) download from servers in T over r1 = T→Y, and
    with ``red_multipath`` (default false) also over r2 = T→X — the draft's "Red multipath"
    column; otherwise Red users run single-path TCP. The cut-set bound is X + T = 63 Mbit/s.

    Delays: ``rtt_ms/2`` one way on X and Y, none on Z and T — the only split that gives all four
    paths the same propagation RTT ``rtt_ms`` (default 150). ``red_instantaneous``: RED on the
    instantaneous queue (default: EWMA). ``delayed_ack``: receivers delay ACKs (default true).

    ``min_ssthresh_segments``: ssthresh floor of the MPTCP users, segments (default: Linux's 2;
    draft-khalili-mptcp-congestion-control-05 §3 gives OLIA a floor of 1 with two paths).
    """
    n_blue = integer("n_blue", n_blue, minimum=1, maximum=MAX_FLOWS)
    mss_floor = _min_ssthresh(min_ssthresh_segments)
    n_red = integer("n_red", n_red, minimum=1, maximum=MAX_FLOWS)
    users({"n_blue": n_blue, "n_red": n_red})
    half = _rtt(rtt_ms, 2) / 2.0
    inst = boolean("red_instantaneous", red_instantaneous)
    sources = {"X": "cx_mbps", "Y": "cy_mbps", "Z": "cz_mbps", "T": "ct_mbps"}
    given = {"X": cx_mbps, "Y": cy_mbps, "Z": cz_mbps, "T": ct_mbps}
    caps = {name: number(sources[name], given[name], positive=True) for name in sources}
    delays = {"X": half, "Y": half, "Z": 0.0, "T": 0.0}
    links = [_red_link(name, caps[name], delays[name], inst, (sources[name],)) for name in sources]
    cc = choice("cc", cc, CC)
    tcp_cc = choice("tcp_cc", tcp_cc, CC)
    blue = _users("blue", n_blue, "mptcp", cc, [["Z", "X"], ["Z", "T", "Y"]], mss_floor)
    if boolean("red_multipath", red_multipath):
        red = _users("red", n_red, "mptcp", cc, [["T", "Y"], ["T", "X"]], mss_floor)
    else:
        red = _users("red", n_red, "tcp", tcp_cc, [["T", "Y"]])
    return _scenario(links, [blue, red], duration_s, warmup_s, seed, delayed_ack)


def two_ap(
    *,
    min_ssthresh_segments: int | None = None,
    n1: int = 10,
    n2: int = 10,
    c1_mbps: float = 1.0,
    c2_mbps: float = 1.0,
    rtt_ms: float = 150.0,
    cc: str = "lia",
    tcp_cc: str = "reno",
    red_instantaneous: bool = False,
    delayed_ack: bool = True,
    duration_s: float = 120.0,
    warmup_s: float = 20.0,
    seed: int = 1,
) -> Scenario:
    """Scenario C, "MPTCP too aggressive towards TCP" (draft-khalili-…-06 §6, spec §5.4).

    ``n1`` multipath users (flow ``multipath``, default 10; the draft uses 10 and 30) connect
    through AP1 (link ``ap1``, capacity ``n1·c1_mbps``) and AP2 (link ``ap2``, capacity
    ``n2·c2_mbps``); ``n2`` single-path users (flow ``singlepath``, default 10) use AP2 only.
    ``c1_mbps``, ``c2_mbps`` default 1. Expected (draft, LIA, N1 = 10): multipath 1.30,
    single-path 0.68 Mbit/s; the optimum without probing cost gives everyone 1.

    One-way delay ``rtt_ms/2`` on each AP, so both paths have propagation RTT ``rtt_ms``
    (default 150). ``red_instantaneous``: RED on the instantaneous queue (default: EWMA).
    ``delayed_ack``: receivers delay ACKs (default true, as on the draft's Linux hosts).

    ``min_ssthresh_segments``: ssthresh floor of the MPTCP users, segments (default: Linux's 2;
    draft-khalili-mptcp-congestion-control-05 §3 gives OLIA a floor of 1 with two paths).
    """
    n1 = integer("n1", n1, minimum=1, maximum=MAX_FLOWS)
    mss_floor = _min_ssthresh(min_ssthresh_segments)
    n2 = integer("n2", n2, minimum=1, maximum=MAX_FLOWS)
    users({"n1": n1, "n2": n2})
    c1 = number("c1_mbps", c1_mbps, positive=True)
    c2 = number("c2_mbps", c2_mbps, positive=True)
    half = _rtt(rtt_ms, 2) / 2.0
    inst = boolean("red_instantaneous", red_instantaneous)
    links = [
        _red_link("ap1", n1 * c1, half, inst, ("n1", "c1_mbps")),
        _red_link("ap2", n2 * c2, half, inst, ("n2", "c2_mbps")),
    ]
    multi = _users("multipath", n1, "mptcp", choice("cc", cc, CC), [["ap1"], ["ap2"]], mss_floor)
    single = _users("singlepath", n2, "tcp", choice("tcp_cc", tcp_cc, CC), [["ap2"]])
    return _scenario(links, [multi, single], duration_s, warmup_s, seed, delayed_ack)
