"""The emulator's report from synthetic measurements: the simulator's fields (the report
model accepts it) and values computed from the measurements by their definitions."""

from __future__ import annotations

from typing import Any

import pytest

from mptcplab import sim
from mptcplab.backends.emu import addressing
from mptcplab.backends.emu.report import RunData, build, congestion_mismatches, jain, summarize
from mptcplab.results import Report
from mptcplab.scenario.model import Scenario

T0 = 1_000_000_000_000
S = 1_000_000_000


def _scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "duration_s": 10,
            "warmup_s": 2,
            "trace": ["cwnd", "ssthresh", "srtt", "queue", "blocks"],
            "trace_interval_ms": 1000,
            "links": [
                {"id": "wifi", "capacity_mbps": 8, "delay_ms": 10},
                {"id": "3g", "capacity_mbps": 2, "delay_ms": 75},
            ],
            "flows": [
                {
                    "id": "phone",
                    "protocol": "mptcp",
                    "cc": "cubic",
                    "scheduler": "linger",
                    "paths": [["wifi"], ["3g"]],
                    "app": {"kind": "blocks", "block_bytes": 1000},
                }
            ],
        }
    )


#: TCP_INFO's snd_ssthresh before the first window reduction (TCP_INFINITE_SSTHRESH).
NO_SSTHRESH = 0x7FFFFFFF


def _tcp(
    acked: int,
    cwnd: int,
    rtt_us: int,
    retrans: int = 0,
    rto: int = 0,
    ssthresh: int = NO_SSTHRESH,
    ca_state: int = 0,
) -> dict[str, Any]:
    return {
        "ca_state": ca_state,
        "snd_cwnd": cwnd,
        "snd_ssthresh": ssthresh,
        "snd_mss": 1448,
        "rtt_us": rtt_us,
        "bytes_acked": acked,
        "total_retrans": retrans,
        "total_rto": rto,
        "data_segs_out": acked // 1448,
        "rwnd_limited_us": 0,
        "snd_wnd": 65535,
    }


def _counters(**values: int) -> dict[str, Any]:
    names = [
        "offered",
        "packets",
        "bytes",
        "random_drops",
        "queue_drops",
        "red_drops",
        "busy_ns",
        "queue_area_packet_ns",
        "max_queue_packets",
        "delivered",
        "busy_release_bytes",
        "busy_release_span_ns",
    ]
    base = dict.fromkeys(names, 0)
    return {**base, **values}


def _dir(counters: dict[str, Any], p99: float = 50.0) -> dict[str, Any]:
    return {
        "counters": counters,
        "lateness": {"count": 10, "p50_us": 10.0, "p99_us": p99, "max_us": 99.0},
    }


def _linkem(t_ns: int, wifi: dict[str, Any], g: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "time_ns": t_ns,
        "started_ns": T0 - S,
        "cpu_user_s": 0.5,
        "cpu_system_s": 0.6,
        "realtime": True,
        "unroutable": 0,
        "links": [
            {"id": "wifi", "forward": _dir(wifi), "reverse": _dir(_counters())},
            {"id": "3g", "forward": _dir(g), "reverse": _dir(_counters())},
        ],
        **extra,
    }


def run_data(**overrides: Any) -> RunData:
    sc = _scenario()
    plan = addressing.plan(sc, "0123abcd")
    a0, a1 = (i.address for i in plan.groups[0].client_ifaces)
    # The receiver read 1 MB by the end of the warm-up and 9 MB by the end: 8 MB in 8 s.
    server = {
        "conns": [
            {
                "flow": 0,
                "bytes": 9_000_000,
                "bytes_at_warmup": 1_000_000,
                "bytes_at_end": 9_000_000,
                # Block k done at 1 s + k s; written 100 ms + k·10 ms earlier.
                "block_done_ns": [T0 + (1 + k) * S for k in range(5)],
                "samples": [
                    {"t_ns": T0, "bytes": 0, "rmem_alloc": 2000, "rcvbuf": 262144},
                    {"t_ns": T0 + S, "bytes": 1, "rmem_alloc": 9000, "rcvbuf": 524288},
                ],
            }
        ]
    }
    writes = [T0 + (1 + k) * S - 100_000_000 - k * 10_000_000 for k in range(5)]
    samples = []
    for k in range(11):
        t = T0 + k * S
        samples.append(
            {
                "t_ns": t,
                "flows": [
                    {
                        "index": 0,
                        # One DATA_FIN retransmission (mptcpi_retransmits) and 4,350 bytes
                        # re-sent at the MPTCP level by the end: just over three segments.
                        "mptcp": {
                            "retransmits": 1,
                            "bytes_retrans": k * 435,
                            "subflows_total": 2,
                            "fallback": False,
                        },
                        "subflows": [
                            {
                                "local": f"{a0}:40000",
                                "remote": "x",
                                "tcp": _tcp(
                                    k * 900_000,
                                    10 + k,
                                    20_000,
                                    retrans=4,
                                    rto=1,
                                    ssthresh=7 if k >= 5 else NO_SSTHRESH,
                                    # In fast recovery twice: at the 2 and 3 s samples, and
                                    # at the 6 s one (TCP_CA_Recovery).
                                    ca_state=3 if k in (2, 3, 6) else 0,
                                ),
                            },
                            {
                                "local": f"{a1}:40001",
                                "remote": "x",
                                "tcp": _tcp(k * 100_000, 20 if k >= 3 else 5, 150_000),
                            },
                        ],
                    }
                ],
            }
        )
    client = {
        "flows": [
            {
                "index": 0,
                "connect_start_ns": T0,
                "connected_ns": T0 + 20_500_000,
                "handshake_rtt_us": 20_300,
                "block_write_ns": writes,
            }
        ],
        "samples": samples,
    }
    wifi_a = _counters(offered=100, busy_ns=1 * S, queue_area_packet_ns=10 * S, packets=90)
    wifi_b = _counters(
        offered=1100,
        busy_ns=7 * S,
        queue_area_packet_ns=74 * S,
        packets=1000,
        bytes=1_500_000,
        queue_drops=20,
        random_drops=5,
        max_queue_packets=14,
        delivered=1000,
        busy_release_bytes=1_000_000,
        busy_release_span_ns=1_000_000_000,
    )
    data = RunData(
        scenario=sc,
        plan=plan,
        t0_ns=T0,
        servers=[server],
        clients=[client],
        linkem_warmup=_linkem(T0 + 2 * S, wifi_a, _counters()),
        linkem_end=_linkem(T0 + 10 * S, wifi_b, _counters()),
        linkem_final=_linkem(
            T0 + 10 * S,
            wifi_b,
            _counters(),
            queue_trace={
                "time_ns": [T0 + k * S for k in range(11)],
                "packets": [[3] * 11, [0] * 11],
            },
        ),
        tun_drops={"c0/p0": 0},
        wall_s=11.0,
        setup_s=0.1,
        kernel_release="6.18",
    )
    for k, v in overrides.items():
        setattr(data, k, v)
    return data


def test_the_report_has_the_simulators_fields() -> None:
    report = build(run_data(), run_id="0123abcd", version="0.1.0")
    parsed = Report.from_dict(report)
    assert parsed.flow("phone").subflows[1].path == ["3g"]
    assert {"fidelity", "backend"} <= set(report)


def test_time_to_max_cwnd_counts_from_each_subflows_establishment() -> None:
    """As the simulator counts it: subflow 0 from the connection's establishment (20.5 ms
    after the start), not from the SYN; a joined subflow from its first sample (here 2 s, the
    kernel reports no join time), not from the connection's establishment."""
    data = run_data()
    for sample in data.clients[0]["samples"][:2]:
        del sample["flows"][0]["subflows"][1]
    flow = build(data, run_id="0123abcd", version="0.1.0")["flows"][0]
    # Subflow 0's window grows at every sample: its maximum is at 10 s.
    assert flow["subflows"][0]["time_to_max_cwnd_s"] == pytest.approx(10.0 - 0.0205)
    # Subflow 1's reached 20 segments at the 3 s sample, 1 s after its first.
    assert flow["subflows"][1]["time_to_max_cwnd_s"] == pytest.approx(1.0)


def test_goodput_and_block_latency_follow_their_definitions() -> None:
    report = build(run_data(), run_id="0123abcd", version="0.1.0")
    flow = report["flows"][0]
    assert flow["goodput_mbps"] == pytest.approx(8_000_000 * 8 / 8 / 1e6)
    # Subflow 0 acked 900 kB per second: 7.2 Mbit/s over the window; subflow 1 0.8.
    assert flow["subflows"][0]["goodput_mbps"] == pytest.approx(7.2)
    assert flow["subflows"][1]["goodput_mbps"] == pytest.approx(0.8)
    # Two recoveries, as the simulator counts them, not the 4 - 1 segments re-sent without a
    # timeout.
    assert flow["subflows"][0]["fast_retransmits"] == 2
    assert flow["subflows"][1]["mean_srtt_ms"] == pytest.approx(150.0)
    # Subflow 1's cwnd reached its maximum (20 × 1448) at the 3 s sample; it started joining
    # when the connection was established, 20.5 ms after the start.
    assert flow["subflows"][1]["max_cwnd_bytes"] == 20 * 1448
    assert flow["subflows"][1]["time_to_max_cwnd_s"] == pytest.approx(3.0 - 0.0205)
    # Reinjected segments: the MPTCP-level bytes re-sent over the 1448-byte MSS, rounded up.
    assert flow["reinjections"] == 4
    # Blocks completed after the 2 s warm-up: k = 1..4, latencies 110..140 ms.
    lat = flow["block_latency"]
    assert lat["count"] == 4
    assert lat["mean_ms"] == pytest.approx(125.0)
    assert lat["max_ms"] == pytest.approx(140.0)
    # Receive memory in payload terms: 160 of every 256 bytes (a 1448-byte segment in a
    # 2304-byte skb): rmem_alloc 9000 holds 5625, SO_RCVBUF 524288 a window of 327680.
    assert flow["peak_rcvbuf_bytes"] == 5625 and flow["final_rcvbuf_bytes"] == 327680
    assert report["backend"]["flows"]["phone"]["handshake_rtt_ms"] == pytest.approx(20.3)


def test_the_first_blocks_latency_includes_the_handshake_as_the_simulators() -> None:
    """The simulator stamps block 0 at the connection's start; the kernel's first write comes
    once connected. With no warm-up, block 0 (done at 1 s, its first byte written at 0.9 s)
    counts from the connect at T0: 1000 ms, not 100."""
    data = run_data()
    data.scenario = data.scenario.model_copy(update={"warmup_s": 0.0})
    lat = build(data, run_id="0123abcd", version="0.1.0")["flows"][0]["block_latency"]
    assert lat["count"] == 5
    assert lat["max_ms"] == pytest.approx(1000.0)
    notes = build(data, run_id="0123abcd", version="0.1.0")["backend"]["notes"]
    assert any("rwnd_limited_s" in n for n in notes)


def test_subflow_goodput_counts_up_to_the_end_when_the_last_sample_comes_late() -> None:
    # The sampler's timer fires a little after the end of the run: its sample of the end is
    # 3 ms late. The window still ends at the end (interpolated between the 9 s sample and the
    # late one), not at the 9 s sample, which would drop one second of the eight.
    data = run_data()
    late = data.clients[0]["samples"][-1]
    late["t_ns"] += 3_000_000
    flow = build(data, run_id="0123abcd", version="0.1.0")["flows"][0]
    acked = 9_000_000 - 1_800_000 - 900_000 * 3_000_000 / (S + 3_000_000)
    assert flow["subflows"][0]["goodput_mbps"] == pytest.approx(acked * 8 / 8 / 1e6)
    assert flow["subflows"][0]["goodput_mbps"] == pytest.approx(7.2, rel=1e-3)


def test_receive_window_limited_time_counts_from_the_warm_up_as_the_simulators() -> None:
    # The kernel's counter runs from the connection's start: 0.3 s of every second on the wifi
    # subflow, 0.1 s on the 3G one. Over the measured 8 s (warm-up 2 s to the end at 10 s) the
    # wifi subflow was limited 2.4 s; its whole count, 3 s, includes the warm-up.
    data = run_data()
    for k, sample in enumerate(data.clients[0]["samples"]):
        wifi, g = sample["flows"][0]["subflows"]
        wifi["tcp"]["rwnd_limited_us"] = k * 300_000
        g["tcp"]["rwnd_limited_us"] = k * 100_000
    flow = build(data, run_id="0123abcd", version="0.1.0")["flows"][0]
    assert flow["rwnd_limited_s"] == pytest.approx(2.4)


def test_a_first_subflow_disconnected_by_the_servers_reset_keeps_its_goodput() -> None:
    # The sample of the end comes 3 ms late, after the server's reset at the end of the run:
    # the kernel has disconnected the connection's first subflow (tcp_disconnect), whose
    # TCP_INFO now reads TCP_CLOSE and zero counters. The window ends at the last sample
    # before that (9 s: 8.1 MB acked, 1.8 MB of it by the 2 s warm-up), not at zero.
    data = run_data()
    late = data.clients[0]["samples"][-1]
    late["t_ns"] += 3_000_000
    first = late["flows"][0]["subflows"][0]
    first["tcp"] = {**_tcp(0, 10, 0), "state": 7}
    flow = build(data, run_id="0123abcd", version="0.1.0")["flows"][0]
    assert flow["subflows"][0]["goodput_mbps"] == pytest.approx(
        (8_100_000 - 1_800_000) * 8 / 8 / 1e6
    )
    assert flow["subflows"][0]["packets_sent"] == 8_100_000 // 1448
    assert flow["subflows"][0]["bytes_delivered"] == 8_100_000
    # The other subflow's counters did not go back: its window still ends at the end.
    assert flow["subflows"][1]["goodput_mbps"] == pytest.approx(0.8, rel=1e-3)


def test_link_counters_are_differences_over_the_measurement_window() -> None:
    link = build(run_data(), run_id="0123abcd", version="0.1.0")["links"][0]
    assert link["utilization"] == pytest.approx(6 / 8)
    assert link["mean_queue_packets"] == pytest.approx(64 / 8)
    assert link["drops"] == 25 and link["loss_rate"] == pytest.approx(25 / 1000)


def test_traces_sit_on_the_sampling_grid() -> None:
    traces = build(run_data(), run_id="0123abcd", version="0.1.0")["traces"]
    assert traces["time_s"] == [float(k) for k in range(11)]
    cwnd = {s["name"]: s["values"] for s in traces["cwnd"]}
    assert cwnd["phone/0"][4] == 14 * 1448
    # tcpi_rtt (µs) in milliseconds, per subflow.
    srtt = {s["name"]: s["values"] for s in traces["srtt"]}
    assert srtt["phone/0"][4] == 20.0 and srtt["phone/1"][4] == 150.0
    # tcpi_snd_ssthresh (segments) in bytes; Linux's "infinite" before a reduction reads 0.
    ssthresh = {s["name"]: s["values"] for s in traces["ssthresh"]}
    assert ssthresh["phone/0"][4] == 0.0 and ssthresh["phone/0"][6] == 7 * 1448
    assert ssthresh["phone/1"] == [0.0] * 11
    assert traces["queue"][0]["values"] == [3.0] * 11
    assert len(traces["blocks"][0]["latency_ms"]) == 5


def test_an_emulator_that_fell_behind_is_flagged() -> None:
    good = build(run_data(), run_id="0123abcd", version="0.1.0")["fidelity"]
    assert not good["emulation_bottleneck"]
    assert good["links"][0]["rate_ratio"] == pytest.approx(1.0)
    slow = _counters(busy_release_bytes=1_000_000, busy_release_span_ns=1_100_000_000)
    data = run_data()
    data.linkem_final = _linkem(T0 + 10 * S, slow, _counters())
    data.tun_drops = {"c0/p0": 7}
    bad = build(data, run_id="0123abcd", version="0.1.0")["fidelity"]
    assert bad["emulation_bottleneck"]
    assert any("achieved" in p for p in bad["problems"])
    assert any("c0/p0 7" in p for p in bad["problems"])


def test_packets_linkem_could_not_write_are_flagged() -> None:
    data = run_data()
    data.linkem_final["interfaces"] = [
        {"netns": "/run/netns/c0", "name": "p0", "write_errors": 0},
        {"netns": "/run/netns/s0", "name": "p0", "write_errors": 3},
    ]
    fidelity = build(data, run_id="0123abcd", version="0.1.0")["fidelity"]
    assert fidelity["emulation_bottleneck"]
    assert fidelity["problems"] == ["linkem could not write packets to their device: s0/p0 3"]
    data.linkem_final["interfaces"][1]["write_errors"] = 0
    assert not build(data, run_id="0123abcd", version="0.1.0")["fidelity"]["emulation_bottleneck"]


def test_summaries_match_their_formulas() -> None:
    assert jain([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert jain([1.0, 0.0]) == pytest.approx(0.5)
    s = summarize([float(x) for x in range(1, 101)])
    assert s is not None
    assert (s["p50_ms"], s["p95_ms"], s["p99_ms"], s["max_ms"]) == (51.0, 95.0, 99.0, 100.0)


@pytest.mark.parametrize("duration_s", [2.0, 2.3, 2.6, 3.0, 3.4])
def test_latency_summaries_are_the_simulators_for_the_same_latencies(duration_s: float) -> None:
    # The simulator's own summary of the latencies it traced: a backend comparison of block
    # latency compares the same statistic. Block counts 6-10 include n with (n - 1)/2 a half.
    scenario = {
        "duration_s": duration_s,
        "seed": 1,
        "links": [{"id": "l", "capacity_mbps": 2.0, "delay_ms": 20.0}],
        "flows": [
            {
                "id": "f",
                "protocol": "tcp",
                "paths": [["l"]],
                "app": {"kind": "blocks", "block_bytes": 65536},
            }
        ],
        "trace": ["blocks"],
    }
    report = sim.run(scenario).to_dict()
    latencies = report["traces"]["blocks"][0]["latency_ms"]
    assert summarize(latencies) == pytest.approx(report["flows"][0]["block_latency"])


def test_a_flow_that_failed_or_fell_back_is_flagged() -> None:
    data = run_data()
    data.clients[0]["flows"][0]["error"] = "connect: Connection refused"
    for s in data.clients[0]["samples"]:
        s["flows"][0]["mptcp"]["fallback"] = True
    problems = build(data, run_id="0123abcd", version="0.1.0")["fidelity"]["problems"]
    assert "flow phone: connect: Connection refused" in problems
    assert "flow phone: the connection fell back to plain TCP" in problems


def test_a_connection_on_another_algorithm_is_named_and_one_never_connected_is_not() -> None:
    data = run_data()
    flow = data.clients[0]["flows"][0]
    groups = data.plan.groups
    flow["congestion"] = "cubic"
    assert congestion_mismatches(groups, data.clients) == []
    assert (
        build(data, run_id="0123abcd", version="0.1.0")["backend"]["flows"]["phone"][
            "congestion_control"
        ]
        == "cubic"
    )
    flow["congestion"] = "bbr"
    assert congestion_mismatches(groups, data.clients) == ["phone asked for cubic and ran bbr"]
    del flow["congestion"]  # never connected: nothing was read back, and nothing is claimed
    assert congestion_mismatches(groups, data.clients) == []
    assert (
        build(data, run_id="0123abcd", version="0.1.0")["backend"]["flows"]["phone"][
            "congestion_control"
        ]
        is None
    )


def test_a_direction_that_released_nothing_shows_no_lateness_not_zero() -> None:
    import io

    from rich.console import Console

    from mptcplab.commands.emu import fidelity_table

    data = run_data()
    for link in data.linkem_final["links"]:
        link["reverse"]["lateness"] = {"count": 0, "p50_us": 0.0, "p99_us": 0.0, "max_us": 0.0}
    report = build(data, run_id="0123abcd", version="0.1.0")
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(fidelity_table(report))
    rows = [line for line in out.getvalue().splitlines() if "wifi" in line or "3g" in line]
    assert len(rows) == 2 and all("none measured" in row for row in rows), out.getvalue()
    assert all("10 / 50 / 99" in row for row in rows), out.getvalue()


def test_a_counter_first_sampled_after_the_warm_up_is_interpolated_from_the_subflows_start() -> (
    None
):
    # Samples every 2 s: a subflow that began at 0.2 s is first sampled just after the warm-up
    # (1 s), with 900 kB acknowledged. Taken for 0 at 1 s, its 4 s window gained those 900 kB.
    from mptcplab.backends.emu.report import _counter_at

    start, warm = T0 + S // 5, T0 + S
    series = [(warm + 1000, {"bytes_acked": 900_000}), (T0 + 3 * S, {"bytes_acked": 2_900_000})]
    at_warm = _counter_at(series, warm, "bytes_acked", start)
    assert at_warm == pytest.approx(900_000 * 0.8e9 / (0.8e9 + 1000))
    assert _counter_at(series, T0 + 2 * S, "bytes_acked", start) == pytest.approx(
        1_900_000, rel=1e-6
    )
    assert _counter_at(series, start, "bytes_acked", start) == 0.0
    assert _counter_at(series, T0 + 9 * S, "bytes_acked", start) == 2_900_000
