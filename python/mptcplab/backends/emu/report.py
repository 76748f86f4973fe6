"""Turn what the programs of a run measured into a report with the simulator's fields
(crates/mpsim/src/report.rs), plus the emulator's ``fidelity`` and ``backend`` blocks.

Definitions follow the simulator's (crates/mpsim/src/sim.rs ``report``): goodput counts bytes
read by the receiving application over the measurement window; link counters are differences
between linkem's snapshots at the end of the warm-up and at the end; block latencies cover the
blocks completed after the warm-up, with the same nearest-rank quantiles. Where the kernel only
offers an approximation, the ``backend.notes`` say so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mptcplab.backends.emu.addressing import Group, Plan
from mptcplab.backends.emu.kernel import KERNEL_CC
from mptcplab.backends.emu.netns import fixed_send_request, window_of_receive_memory
from mptcplab.scenario.model import Scenario
from mptcplab.sim import copy_start_ns

FORMAT_VERSION = 1

#: TCP_INFO's tcpi_ca_state values (include/net/tcp.h, enum tcp_ca_state).
_CA_OPEN = 0
_CA_RECOVERY = 3

#: Thresholds beyond which the emulator, not the emulated network, shaped the result.
MIN_RATE_RATIO = 0.99
MAX_LATENESS_P99_US = 1000.0
MAX_LATENESS_P999_US = 5000.0
MAX_CPU_PERCENT = 85.0
#: Fewer back-to-back releases than this give no meaningful rate measurement.
MIN_BUSY_RELEASES_BYTES = 100 * 1500

NOTES = (
    "final_rcvbuf_bytes and peak_rcvbuf_bytes are the kernel's receive-memory figures "
    "(SO_RCVBUF, SO_MEMINFO rmem_alloc) times 160/256, the payload share of the memory the "
    "kernel charges a received segment on the emulator's links",
    "fast_retransmits = entries into fast recovery (TCP_INFO's ca_state turning Recovery) seen "
    "by the samples every trace_interval_ms: a recovery shorter than that can be missed",
    "subflow goodput is the subflow's bytes acknowledged (tcpi_bytes_acked) over the window; "
    "cwnd, srtt and time_to_max_cwnd_s come from samples every trace_interval_ms",
    "penalizations is always 0: the kernel does not penalise subflows",
    "an MPTCP flow's rwnd_limited_s is the largest of its subflows' TCP_INFO counters, which run "
    "only while a subflow holds data its peer's window refuses; upstream MPTCP sends nothing "
    "past the connection-level window, so a connection held by a full receive buffer reads "
    "near 0 here, where the simulator counts that time",
    "an MPTCP flow's send-buffer cap (sndbuf_max_bytes, tcp_wmem[2]) binds each subflow in the "
    "kernel, which allows the connection about their sum (__mptcp_sync_sndbuf); the simulator "
    "caps the connection",
)


@dataclass
class RunData:
    """Everything a run collected, handed to :func:`build`."""

    scenario: Scenario
    plan: Plan
    t0_ns: int
    servers: list[dict[str, Any]]
    clients: list[dict[str, Any]]
    linkem_warmup: dict[str, Any]
    linkem_end: dict[str, Any]
    linkem_final: dict[str, Any]
    tun_drops: dict[str, int]
    wall_s: float
    setup_s: float
    kernel_release: str
    notes: list[str] = field(default_factory=list)
    coupled: dict[str, Any] | None = None
    #: Per flow id, what the backend block records (filled by :func:`build`).
    flow_extra: dict[str, Any] = field(default_factory=dict)


def summarize(latencies_ms: list[float]) -> dict[str, Any] | None:
    """LatencySummary with the simulator's nearest-rank quantiles: the value at index
    (n - 1)·p of the sorted latencies, a half rounded up as Rust's ``f64::round`` does (not to
    the even index, as Python's ``round``)."""
    if not latencies_ms:
        return None
    lat = sorted(latencies_ms)
    n = len(lat)

    def q(p: float) -> float:
        return lat[math.floor((n - 1) * p + 0.5)]

    return {
        "count": n,
        "mean_ms": sum(lat) / n,
        "p50_ms": q(0.5),
        "p95_ms": q(0.95),
        "p99_ms": q(0.99),
        "max_ms": lat[-1],
    }


def jain(values: list[float]) -> float:
    """Jain's fairness index (spec §5.2)."""
    if not values or not any(values):
        return 0.0
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def _conn_for(server: dict[str, Any], index: int) -> dict[str, Any] | None:
    for c in server.get("conns", []):
        if c.get("flow") == index:
            return c
    return None


def _flow_samples(client: dict[str, Any], index: int) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for s in client.get("samples", []):
        for f in s["flows"]:
            if f["index"] == index:
                out.append((s["t_ns"], f))
    return out


def _subflow_series(
    group: Group, samples: list[tuple[int, dict[str, Any]]]
) -> dict[int, list[tuple[int, dict[str, Any]]]]:
    """Per path index, the (time, tcp_info) samples of the subflow that used it, up to the
    first sample whose counters went back (see :func:`_until_disconnected`)."""
    series: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for t, f in samples:
        if f.get("tcp") is not None:
            series.setdefault(0, []).append((t, f["tcp"]))
            continue
        for sf in f.get("subflows", []):
            p = group.path_of_address(sf["local"].rsplit(":", 1)[0])
            if p is not None:
                series.setdefault(p, []).append((t, sf["tcp"]))
    return {p: _until_disconnected(s) for p, s in series.items()}


def _until_disconnected(
    series: list[tuple[int, dict[str, Any]]],
) -> list[tuple[int, dict[str, Any]]]:
    """The samples before the socket's counters went back. A live socket's cumulative
    counters never decrease, but when the peer resets an MPTCP connection the kernel keeps its
    first subflow and disconnects it (``__mptcp_close_ssk`` → ``tcp_disconnect``), which zeroes
    ``tcpi_bytes_acked`` and ``tcpi_data_segs_out``. The server resets its side at the end of
    the run, so a sample of the end that comes a few milliseconds late can see that: kept, it
    made the interpolation at the end fall towards zero and the subflow's goodput read 0.
    (On this kernel, 6.18: a first subflow that had 1,000,001 bytes acknowledged in 25
    segments reads state 7, 0 bytes and 0 segments once the peer has reset the connection.)"""

    counters = ("bytes_acked", "data_segs_out")
    for i in range(1, len(series)):
        now, before = series[i][1], series[i - 1][1]
        if any(now.get(c, 0) < before.get(c, 0) for c in counters):
            return series[:i]
    return series


def _counter_at(
    series: list[tuple[int, dict[str, Any]]], t_ns: int, key: str, origin_ns: int
) -> float:
    """A cumulative counter at ``t_ns``, interpolated linearly between the samples around it,
    from 0 at ``origin_ns`` (when the subflow began) to the first sample, the last value after
    the last one. The sampler runs on its own timer, so the sample of an instant such as the
    end of the warm-up comes a little after it; taking the sample before instead would drop a
    whole sampling interval from the window, and taking the counter for 0 before the first
    sample, as was done, took a subflow first sampled just after the warm-up for one that had
    sent nothing by then (at 2-second samples, 9.0 Mbit/s on an 8 Mbit/s link)."""
    before_t, before_v = origin_ns, 0.0
    if t_ns <= origin_ns:
        return 0.0
    for t, s in series:
        value = float(s[key])
        if t == t_ns:
            return value
        if t > t_ns:
            if t <= before_t:  # sampled before the origin: nothing to interpolate from
                return value
            return before_v + (value - before_v) * (t_ns - before_t) / (t - before_t)
        before_t, before_v = t, value
    return before_v


def _reinjected_segments(
    mptcp: dict[str, Any] | None, series: dict[int, list[tuple[int, dict[str, Any]]]]
) -> int:
    """Segments' worth of data re-sent at the MPTCP level: ``mptcpi_bytes_retrans`` (what
    ``__mptcp_retrans`` re-sent on another subflow) over the subflows' MSS, rounded up.
    ``mptcpi_retransmits`` is not it: the kernel counts only DATA_FIN retransmissions there
    (``icsk_retransmits`` of the MPTCP socket)."""
    if not mptcp:
        return 0
    mss = max((s[-1][1].get("snd_mss", 0) for s in series.values() if s), default=0)
    return -(-int(mptcp.get("bytes_retrans", 0)) // mss) if mss else 0


def _subflow_report(
    data: RunData,
    p: int,
    path: list[str],
    series: list[tuple[int, dict[str, Any]]],
    established_ns: int,
) -> dict[str, Any]:
    sc = data.scenario
    warm = data.t0_ns + int(sc.warmup_s * 1e9)
    end = data.t0_ns + int(sc.duration_s * 1e9)
    measured = sc.duration_s - sc.warmup_s
    last = series[-1][1] if series else {}
    acked = _counter_at(series, end, "bytes_acked", established_ns) - _counter_at(
        series, warm, "bytes_acked", established_ns
    )
    cwnds = [(t, s["snd_cwnd"] * s["snd_mss"]) for t, s in series]
    max_cwnd = max((c for _, c in cwnds), default=0)
    reached = next((t for t, c in cwnds if c == max_cwnd), established_ns)
    rtts = [s["rtt_us"] for _, s in series if s["rtt_us"] > 0]
    retrans = int(last.get("total_retrans", 0))
    timeouts = int(last.get("total_rto", 0))
    # Loss recoveries begun without a timeout, as the simulator counts them (one per episode,
    # not per segment re-sent): the samples where the subflow has entered TCP_CA_Recovery.
    states = [s.get("ca_state", _CA_OPEN) for _, s in series]
    recoveries = sum(
        1
        for was, now in zip([_CA_OPEN, *states], states, strict=False)
        if now == _CA_RECOVERY != was
    )
    return {
        "index": p,
        "path": path,
        "goodput_mbps": max(acked, 0) * 8 / measured / 1e6,
        "bytes_delivered": int(last.get("bytes_acked", 0)),
        "packets_sent": int(last.get("data_segs_out", 0)),
        "retransmits": retrans,
        "fast_retransmits": recoveries,
        "timeouts": timeouts,
        "mean_srtt_ms": sum(rtts) / len(rtts) / 1000 if rtts else 0.0,
        "max_cwnd_bytes": float(max_cwnd),
        "time_to_max_cwnd_s": max(reached - established_ns, 0) / 1e9,
    }


def congestion_mismatches(groups: Sequence[Group], clients: Sequence[dict[str, Any]]) -> list[str]:
    """Flows whose connection ran another congestion control than the one asked for, one line
    each. The kernel accepts any name on an MPTCP socket and leaves its subflows on the default
    algorithm when the name is not registered, so only reading it back tells."""
    wrong = []
    for group, client in zip(groups, clients, strict=True):
        wanted = KERNEL_CC[group.flow.cc_kind()]
        ran = {f["index"]: f.get("congestion") for f in client.get("flows", [])}
        for k, flow_id in enumerate(group.flow.flow_ids()):
            if ran.get(k) not in (None, wanted):
                wrong.append(f"{flow_id} asked for {wanted} and ran {ran[k]}")
    return wrong


def sndbuf_mismatches(groups: Sequence[Group], clients: Sequence[dict[str, Any]]) -> list[str]:
    """Flows with a fixed send buffer whose socket the kernel gave another size, one line
    each: the size is the memory the kernel holds the queue to, read back once connected."""
    wrong = []
    for group, client in zip(groups, clients, strict=True):
        wanted = group.flow.sndbuf_bytes
        if wanted is None:
            continue
        got = {f["index"]: f.get("sndbuf_bytes") for f in client.get("flows", [])}
        for k, flow_id in enumerate(group.flow.flow_ids()):
            if got.get(k) is not None and got[k] != 2 * fixed_send_request(wanted):
                wrong.append(f"{flow_id} asked for {wanted} bytes and got {got[k]}")
    return wrong


def _flows(data: RunData) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    sc = data.scenario
    measured = sc.duration_s - sc.warmup_s
    warm = data.t0_ns + int(sc.warmup_s * 1e9)
    end = data.t0_ns + int(sc.duration_s * 1e9)
    flows: list[dict[str, Any]] = []
    block_series: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    copy_starts = copy_start_ns(sc)
    for group, server, client in zip(data.plan.groups, data.servers, data.clients, strict=True):
        spec = group.flow
        for k, flow_id in enumerate(spec.flow_ids()):
            # Each copy's own start, as the client started it (traffic.client_config).
            start_ns = data.t0_ns + copy_starts[group.index][k]
            conn = _conn_for(server, k) or {}
            sent = next((f for f in client.get("flows", []) if f["index"] == k), {})
            samples = _flow_samples(client, k)
            series = _subflow_series(group, samples)
            # Each subflow's times count from its establishment, as the simulator's do: the
            # first subflow's is the connection's; a joined one's is not reported, and its
            # first sample bounds it (within one sampling interval, never before the
            # connection's).
            connected_ns = sent.get("connected_ns") or start_ns
            subflows = [
                _subflow_report(
                    data,
                    p,
                    spec.paths[p],
                    series[p],
                    connected_ns if p == 0 or not series[p] else max(series[p][0][0], connected_ns),
                )
                for p in sorted(series)
            ]
            last_mptcp = next((f["mptcp"] for _, f in reversed(samples) if f.get("mptcp")), None)
            # Within the measured window, as the simulator counts it (from the warm-up on).
            rwnd_limited_us = max(
                (
                    _counter_at(s, end, "rwnd_limited_us", start_ns)
                    - _counter_at(s, warm, "rwnd_limited_us", start_ns)
                    for s in series.values()
                ),
                default=0.0,
            )
            rmem = [s["rmem_alloc"] for s in conn.get("samples", [])]
            rcvbuf = [s["rcvbuf"] for s in conn.get("samples", [])]
            completion_s = None
            if conn.get("completion_ns"):
                completion_s = (conn["completion_ns"] - start_ns) / 1e9
            block_latency = None
            if spec.app.kind == "blocks":
                writes = list(sent.get("block_write_ns", []))
                if writes and sent.get("connect_start_ns"):
                    # Block 0 waits for the handshake, as the simulator's (stamped at the
                    # connection's start): its first byte can only be written once connected.
                    writes[0] = min(writes[0], sent["connect_start_ns"])
                dones = conn.get("block_done_ns", [])
                pairs = list(zip(dones, writes, strict=False))
                block_latency = summarize([(d - w) / 1e6 for d, w in pairs if d >= warm])
                if "blocks" in sc.trace:
                    block_series.append(
                        {
                            "flow": flow_id,
                            "done_s": [(d - data.t0_ns) / 1e9 for d, _ in pairs],
                            "latency_ms": [(d - w) / 1e6 for d, w in pairs],
                        }
                    )
            flows.append(
                {
                    "id": flow_id,
                    "protocol": spec.protocol,
                    "cc": spec.cc_kind(),
                    "goodput_mbps": (conn.get("bytes_at_end", 0) - conn.get("bytes_at_warmup", 0))
                    * 8
                    / measured
                    / 1e6,
                    "bytes_delivered": int(conn.get("bytes", 0)),
                    "retransmits": sum(s["retransmits"] for s in subflows),
                    "reinjections": _reinjected_segments(last_mptcp, series),
                    "penalizations": 0,
                    "rwnd_limited_s": rwnd_limited_us / 1e6,
                    "peak_rcvbuf_bytes": window_of_receive_memory(max(rmem, default=0)),
                    "final_rcvbuf_bytes": window_of_receive_memory(rcvbuf[-1] if rcvbuf else 0),
                    "completion_s": completion_s,
                    "block_latency": block_latency,
                    "subflows": subflows,
                }
            )
            connect_ms = None
            if sent.get("connected_ns") and sent.get("connect_start_ns"):
                connect_ms = (sent["connected_ns"] - sent["connect_start_ns"]) / 1e6
            rtt_us = sent.get("handshake_rtt_us")
            extra[flow_id] = {
                # What the kernel ran (read once connected); None if it never connected.
                "congestion_control": sent.get("congestion"),
                "connect_ms": connect_ms,
                "handshake_rtt_ms": rtt_us / 1000 if rtt_us else None,
                "error": sent.get("error"),
                "mptcp_fallback": bool(last_mptcp and last_mptcp.get("fallback")),
                "subflows_total": int(last_mptcp["subflows_total"]) if last_mptcp else None,
                "namespaces": [group.client_ns, group.server_ns],
            }
    return flows, block_series, extra


def _diff(b: dict[str, Any], a: dict[str, Any], key: str) -> int:
    return int(b[key]) - int(a[key])


def _links(data: RunData) -> list[dict[str, Any]]:
    a_links = {lk["id"]: lk for lk in data.linkem_warmup["links"]}
    dt_ns = data.linkem_end["time_ns"] - data.linkem_warmup["time_ns"]
    out = []
    for lk in data.linkem_end["links"]:
        b = lk["forward"]["counters"]
        a = a_links[lk["id"]]["forward"]["counters"]
        offered = _diff(b, a, "offered")
        drops = sum(_diff(b, a, k) for k in ("queue_drops", "red_drops", "random_drops"))
        out.append(
            {
                "id": lk["id"],
                "utilization": _diff(b, a, "busy_ns") / dt_ns if dt_ns > 0 else 0.0,
                "packets": _diff(b, a, "packets"),
                "bytes": _diff(b, a, "bytes"),
                "drops": drops,
                "queue_drops": _diff(b, a, "queue_drops"),
                "red_drops": _diff(b, a, "red_drops"),
                "random_drops": _diff(b, a, "random_drops"),
                "loss_rate": drops / offered if offered > 0 else 0.0,
                "mean_queue_packets": _diff(b, a, "queue_area_packet_ns") / dt_ns
                if dt_ns > 0
                else 0.0,
                "max_queue_packets": int(b["max_queue_packets"]),
            }
        )
    return out


def _lateness(summary: dict[str, Any]) -> dict[str, Any]:
    return {
        "count": summary["count"],
        "p50_us": summary["p50_us"],
        "p99_us": summary["p99_us"],
        "p999_us": summary.get("p999_us", summary["p99_us"]),
        "max_us": summary["max_us"],
    }


def fidelity(data: RunData) -> dict[str, Any]:
    """How faithfully linkem reproduced the configured links, and whether it was the
    bottleneck of the run."""
    final = data.linkem_final
    wall_s = (final["time_ns"] - final["started_ns"]) / 1e9
    cpu_s = final["cpu_user_s"] + final["cpu_system_s"]
    cpu_percent = 100.0 * cpu_s / wall_s if wall_s > 0 else 0.0
    problems: list[str] = []
    links = []
    for spec, lk in zip(data.scenario.links, final["links"], strict=True):
        fwd, rev = lk["forward"], lk["reverse"]
        c = fwd["counters"]
        achieved = None
        ratio = None
        if c["busy_release_bytes"] >= MIN_BUSY_RELEASES_BYTES and c["busy_release_span_ns"] > 0:
            achieved = c["busy_release_bytes"] * 8 / c["busy_release_span_ns"] * 1e3
            ratio = achieved / spec.capacity_mbps
        link_problems = []
        if ratio is not None and ratio < MIN_RATE_RATIO:
            link_problems.append(
                f"achieved {achieved:.3f} of {spec.capacity_mbps:g} Mbit/s while busy"
            )
        for name, d in (("forward", fwd), ("reverse", rev)):
            lat = d["lateness"]
            p99, p999 = lat["p99_us"], lat.get("p999_us", lat["p99_us"])
            if lat["count"] and (p99 > MAX_LATENESS_P99_US or p999 > MAX_LATENESS_P999_US):
                link_problems.append(
                    f"{name} release lateness p99 {p99 / 1000:.2f} ms, p99.9 {p999 / 1000:.2f} ms"
                )
        problems += [f"link {spec.id}: {p}" for p in link_problems]
        links.append(
            {
                "id": spec.id,
                "configured_mbps": spec.capacity_mbps,
                "achieved_busy_mbps": achieved,
                "rate_ratio": ratio,
                "lateness_us": _lateness(fwd["lateness"]),
                "reverse_lateness_us": _lateness(rev["lateness"]),
                "ok": not link_problems,
            }
        )
    if cpu_percent > MAX_CPU_PERCENT:
        problems.append(f"linkem used {cpu_percent:.0f}% of a core")
    dropped = {k: v for k, v in data.tun_drops.items() if v}
    if dropped:
        problems.append(
            "the kernel dropped packets linkem did not read in time: "
            + ", ".join(f"{k} {v}" for k, v in sorted(dropped.items()))
        )
    for flow_id, extra in data.flow_extra.items():
        if extra["error"]:
            problems.append(f"flow {flow_id}: {extra['error']}")
        if extra["mptcp_fallback"]:
            problems.append(f"flow {flow_id}: the connection fell back to plain TCP")
    # A packet linkem could not write never reached its host: the run lost it, not the network.
    refused = {
        f"{i['netns'].rsplit('/', 1)[-1]}/{i['name']}": i["write_errors"]
        for i in final.get("interfaces", [])
        if i["write_errors"]
    }
    if refused:
        problems.append(
            "linkem could not write packets to their device: "
            + ", ".join(f"{k} {v}" for k, v in sorted(refused.items()))
        )
    if final.get("unroutable"):
        problems.append(f"{final['unroutable']} packets had no route in linkem")
    return {
        "links": links,
        "linkem_cpu_percent": cpu_percent,
        "realtime_scheduling": bool(final.get("realtime")),
        "tun_drops": sum(data.tun_drops.values()),
        "emulation_bottleneck": bool(problems),
        "problems": problems,
    }


#: Linux's TCP_INFINITE_SSTHRESH: no threshold set yet (the report's 0, as the simulator's).
_INFINITE_SSTHRESH = 0x7FFFFFFF


def _ssthresh_bytes(sample: dict[str, Any]) -> float:
    segments = int(sample["snd_ssthresh"])
    return 0.0 if segments >= _INFINITE_SSTHRESH else float(segments * sample["snd_mss"])


def _traces(data: RunData, block_series: list[dict[str, Any]]) -> dict[str, Any] | None:
    sc = data.scenario
    if not sc.trace:
        return None
    step_ns = int(sc.trace_interval_ms * 1e6)
    n = int(sc.duration_s * 1e9 // step_ns) + 1
    grid = [data.t0_ns + k * step_ns for k in range(n)]
    traces: dict[str, Any] = {"time_s": [(t - data.t0_ns) / 1e9 for t in grid]}

    def on_grid(series: list[tuple[int, float]]) -> list[float]:
        out, i, value = [], 0, 0.0
        for t in grid:
            while i < len(series) and series[i][0] <= t + step_ns // 2:
                value = series[i][1]
                i += 1
            out.append(value)
        return out

    if {"cwnd", "ssthresh", "srtt", "rwnd"} & set(sc.trace):
        cwnd, ssthresh, srtt, rwnd = [], [], [], []
        for group, client in zip(data.plan.groups, data.clients, strict=True):
            for k, flow_id in enumerate(group.flow.flow_ids()):
                series = _subflow_series(group, _flow_samples(client, k))
                for p in sorted(series):
                    name = f"{flow_id}/{p}"
                    pts = [(t, float(s["snd_cwnd"] * s["snd_mss"])) for t, s in series[p]]
                    cwnd.append({"name": name, "values": on_grid(pts)})
                    pts = [(t, _ssthresh_bytes(s)) for t, s in series[p]]
                    ssthresh.append({"name": name, "values": on_grid(pts)})
                    # TCP_INFO's tcpi_rtt is the kernel's smoothed RTT, microseconds.
                    pts = [(t, s["rtt_us"] / 1000.0) for t, s in series[p]]
                    srtt.append({"name": name, "values": on_grid(pts)})
                first = series.get(0, [])
                rwnd.append(
                    {
                        "name": flow_id,
                        "values": on_grid([(t, float(s["snd_wnd"])) for t, s in first]),
                    }
                )
        if "cwnd" in sc.trace:
            traces["cwnd"] = cwnd
        if "ssthresh" in sc.trace:
            traces["ssthresh"] = ssthresh
        if "srtt" in sc.trace:
            traces["srtt"] = srtt
        if "rwnd" in sc.trace:
            traces["rwnd"] = rwnd
    if "queue" in sc.trace:
        qt = data.linkem_final.get("queue_trace") or {}
        times, packets = qt.get("time_ns", []), qt.get("packets", [])
        traces["queue"] = []
        for i, spec in enumerate(sc.links):
            values = map(float, packets[i] if i < len(packets) else [])
            traces["queue"].append(
                {"name": spec.id, "values": on_grid(list(zip(times, values, strict=False)))}
            )
    if "blocks" in sc.trace:
        traces["blocks"] = block_series
    return traces


def build(data: RunData, *, run_id: str, version: str) -> dict[str, Any]:
    sc = data.scenario
    flows, block_series, data.flow_extra = _flows(data)
    final = data.linkem_final
    offered = sum(
        lk[d]["counters"]["offered"] for lk in final["links"] for d in ("forward", "reverse")
    )
    delivered = sum(
        lk[d]["counters"]["delivered"] for lk in final["links"] for d in ("forward", "reverse")
    )
    report: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "mpsim_version": version,
        "scenario": sc.to_dict(),
        "seed": sc.seed,
        "measured_s": sc.duration_s - sc.warmup_s,
        "events": offered,
        "packets_delivered": delivered,
        "data_packets_delivered": sum(
            lk["forward"]["counters"]["delivered"] for lk in final["links"]
        ),
        "flows": flows,
        "links": _links(data),
        "wall_s": data.wall_s,
    }
    traces = _traces(data, block_series)
    if traces is not None:
        report["traces"] = traces
    report["fidelity"] = fidelity(data)
    report["backend"] = {
        "name": "emu",
        "kernel_release": data.kernel_release,
        "run_id": run_id,
        "scheduler": "kernel default (linger time)",
        "setup_s": data.setup_s,
        "coupled_congestion_control": data.coupled,
        "flows": data.flow_extra,
        "jain_fairness": jain([f["goodput_mbps"] for f in flows]),
        "notes": [*data.notes, *NOTES],
    }
    return report
