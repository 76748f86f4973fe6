"""Templates build the networks their sources describe (spec §4.6, §5.4, §5.6): capacities,
delays, buffers, paths and populations are checked against the published values."""

from __future__ import annotations

import inspect
import math
from typing import Any

import pytest

from mptcplab.errors import UserError
from mptcplab.scenario import templates as t
from mptcplab.scenario.model import DropTailQueue, RedQueue, Scenario


def _path_rtt_ms(s: Scenario, path: list[str]) -> float:
    """Propagation RTT: the reverse direction has the same delay as the forward one."""
    return 2.0 * sum(s.link(hop).delay_ms for hop in path)


def _buffer_bytes(s: Scenario, link_id: str) -> float:
    link = s.link(link_id)
    assert isinstance(link.queue, DropTailQueue) and link.queue.ms is not None
    return link.capacity_mbps * 1e6 / 8 * link.queue.ms / 1e3


# ---- CoNEXT 2013 -----------------------------------------------------------------------------


def test_two_path_links_follow_the_factors() -> None:
    s = t.two_path(
        capacity_mbps=(10, 2.5), rtt_ms=(20, 150), queuing_delay_ms=(50, 800), loss=(0.01, 0)
    )
    a, b = s.links
    assert (a.capacity_mbps, b.capacity_mbps) == (10, 2.5)
    assert (a.delay_ms, b.delay_ms) == (10, 75)  # one-way = RTT / 2
    assert _full_buffer_wait_ms(a) == pytest.approx(50, abs=_packet_ms(a) / 2)
    assert _full_buffer_wait_ms(b) == pytest.approx(800, abs=_packet_ms(b) / 2)
    assert (a.loss, b.loss) == (0.01, 0)
    (flow,) = s.flows
    assert flow.protocol == "mptcp" and flow.paths == [[a.id], [b.id]]
    assert [_path_rtt_ms(s, p) for p in flow.paths] == [20, 150]


def test_two_path_rtt_20_gives_10_ms_each_way() -> None:
    s = t.two_path(rtt_ms=20, queuing_delay_ms=80)
    assert [link.delay_ms for link in s.links] == [10, 10]
    # 10 Mbit/s: 1.2 ms per full packet; 80 ms of waiting room is 66.7 packets, so 67 wait.
    assert [link.queue for link in s.links] == [DropTailQueue(packets=1 + 67)] * 2


@pytest.mark.parametrize(
    ("capacity_mbps", "queuing_delay_ms"),
    [(100.0, 0.0), (100.0, 37.0), (10.0, 50.0), (2.5, 800.0), (0.5, 96.0), (0.5, 30.0)],
)
def test_two_path_buffer_adds_the_queuing_delay_asked_for(
    capacity_mbps: float, queuing_delay_ms: float
) -> None:
    """The factor is the queuing delay a full buffer adds (spec §4.6): the packets waiting
    behind the one being sent, in whole full-size packets, wait that long within half a
    packet's transmission time, however slow the link."""
    s = t.two_path(capacity_mbps=capacity_mbps, queuing_delay_ms=queuing_delay_ms)
    for link in s.links:
        assert _full_buffer_wait_ms(link) == pytest.approx(
            queuing_delay_ms, abs=_packet_ms(link) / 2
        )


def _packet_ms(link: Any) -> float:
    """Transmission time of a full-size packet (1500 B on the wire)."""
    return 1500 * 8 / (link.capacity_mbps * 1e3)


def _full_buffer_wait_ms(link: Any) -> float:
    """Longest wait of a full-size packet: the buffer counts the packet being sent."""
    assert isinstance(link.queue, DropTailQueue) and link.queue.packets is not None
    return (link.queue.packets - 1) * _packet_ms(link)


def test_two_path_connection_options() -> None:
    s = t.two_path(cc="olia", rcvbuf=131072, penalization="off", opportunistic_retransmit=False)
    f = s.flows[0]
    assert (f.cc, f.rcvbuf_bytes, f.rcvbuf_mode()) == ("olia", 131072, "fixed")
    assert (f.penalization, f.opportunistic_retransmit) == ("off", False)
    auto = t.two_path().flows[0]
    assert auto.rcvbuf == "auto" and auto.rcvbuf_bytes is None
    assert t.two_path(duration_s=60).duration_s == 60  # the study's 60 s iperf runs


def test_two_path_and_its_reference_take_the_loss_detection_given() -> None:
    # The default leaves the flow's tcp table as it was (run keys of existing stores hold).
    assert "loss_detection" not in t.two_path().flows[0].tcp.model_fields_set
    assert t.two_path().flows[0].tcp.loss_detection == "fack"
    for scenario in (t.two_path(loss_detection="rack"), t.single_path(loss_detection="rack")):
        assert scenario.flows[0].tcp.loss_detection == "rack"


def test_two_path_and_its_reference_take_the_cwnd_limited_check_given() -> None:
    assert "tcp" not in t.two_path().flows[0].model_fields_set
    assert t.two_path().flows[0].tcp.cwnd_limited_check == "per_ack"
    for scenario in (
        t.two_path(cwnd_limited_check="per_round", loss_detection="rack"),
        t.single_path(cwnd_limited_check="per_round", loss_detection="rack"),
    ):
        tcp = scenario.flows[0].tcp
        assert (tcp.cwnd_limited_check, tcp.loss_detection) == ("per_round", "rack")
    with pytest.raises(UserError) as info:
        t.two_path(cwnd_limited_check="always")
    assert info.value.field == "cwnd_limited_check"


def test_two_path_and_its_reference_take_prr_with_rack_only() -> None:
    assert t.two_path().flows[0].tcp.prr is False
    for scenario in (
        t.two_path(prr=True, loss_detection="rack"),
        t.single_path(prr=True, loss_detection="rack"),
    ):
        assert scenario.flows[0].tcp.prr is True
    # PRR is modelled with RACK's loss detection only: with FACK the scenario is refused.
    with pytest.raises(UserError) as info:
        t.two_path(prr=True)
    assert "prr" in str(info.value)
    with pytest.raises(UserError) as info:
        t.two_path(prr="yes", loss_detection="rack")
    assert info.value.field == "prr"


@pytest.mark.parametrize("switch", ["slow_start_after_idle", "delayed_ack"])
def test_two_path_and_its_reference_take_a_tcp_switch(switch: str) -> None:
    assert getattr(t.two_path().flows[0].tcp, switch) is False
    for scenario in (t.two_path(**{switch: True}), t.single_path(**{switch: True})):
        assert getattr(scenario.flows[0].tcp, switch) is True
    with pytest.raises(UserError) as info:
        t.two_path(**{switch: "sometimes"})
    assert info.value.field == switch


def test_two_path_and_its_reference_take_a_jitter_per_path() -> None:
    # Absent unless asked for (the link's default is none), as the templates wrote it before.
    assert all("jitter_ms" not in link.model_fields_set for link in t.two_path().links)
    for scenario in (t.two_path(jitter_ms=0.05), t.single_path(jitter_ms=0.05)):
        assert [link.jitter_ms for link in scenario.links] == [0.05, 0.05]
    assert [link.jitter_ms for link in t.two_path(jitter_ms=(0.0, 0.2)).links] == [0.0, 0.2]
    with pytest.raises(UserError) as info:
        t.two_path(jitter_ms=(0.1, -0.1))
    assert info.value.field == "jitter_ms[1]"


@pytest.mark.parametrize(
    ("option", "default", "kernels"),
    [("cubic_variant", "rfc9438", "linux"), ("drs_variant", "classic", "linux")],
)
def test_two_path_and_its_reference_take_the_kernels_variants(
    option: str, default: str, kernels: str
) -> None:
    assert getattr(t.two_path().flows[0].tcp, option) == default
    for scenario in (
        t.two_path(cc="cubic", **{option: kernels}),
        t.single_path(cc="cubic", **{option: kernels}),
    ):
        assert getattr(scenario.flows[0].tcp, option) == kernels
    with pytest.raises(UserError) as info:
        t.two_path(**{option: "bsd"})
    assert info.value.field == option


def test_two_path_refuses_tcp() -> None:
    with pytest.raises(UserError) as info:
        t.two_path(protocol="tcp")
    assert info.value.field == "protocol" and "single_path" in info.value.detail


@pytest.mark.parametrize("path", [0, 1])
def test_single_path_is_two_path_with_one_tcp_subflow(path: int) -> None:
    params: dict[str, Any] = {
        "capacity_mbps": (10, 3),
        "rtt_ms": (20, 60),
        "queuing_delay_ms": (10, 100),
        "loss": (0, 0.01),
        "seed": 4,
        "duration_s": 30,
    }
    ref = t.single_path(path=path, **params)
    multi = t.two_path(**params)
    assert ref.links == multi.links
    (flow,) = ref.flows
    assert flow.protocol == "tcp" and flow.cc == "reno"
    assert flow.paths == [multi.flows[0].paths[path]]
    assert (ref.seed, ref.duration_s) == (4, 30)


def test_three_bottleneck_ring() -> None:
    s = t.three_bottleneck(capacity_mbps=(5, 10, 20), rtt_ms=(10, 20, 40))
    assert [link.capacity_mbps for link in s.links] == [5, 10, 20]
    one_hop: dict[str, int] = {}
    two_hop: dict[str, int] = {}
    for flow in s.flows:
        assert flow.protocol == "mptcp"
        short, long_ = sorted(flow.paths, key=len)
        assert len(short) == 1 and len(long_) == 2 and short[0] not in long_
        one_hop[short[0]] = one_hop.get(short[0], 0) + 1
        for hop in long_:
            two_hop[hop] = two_hop.get(hop, 0) + 1
        # A two-hop subflow's propagation RTT is the sum of its bottlenecks' RTTs.
        rtts = {"bottleneck0": 10, "bottleneck1": 20, "bottleneck2": 40}
        assert _path_rtt_ms(s, long_) == sum(rtts[h] for h in long_)
    ids = {link.id for link in s.links}
    assert one_hop == dict.fromkeys(ids, 1)
    assert two_hop == dict.fromkeys(ids, 2)


# ---- draft-khalili-mptcp-performance-issues-06 ----------------------------------------------


@pytest.mark.parametrize("capacity", [10.0, 30.0, 1.0, 27.0])
def test_red_profile_of_the_draft(capacity: float) -> None:
    # 10 Mbit/s: 25/50 MSS, max_p 0.1, p -> 1 at 100 MSS; thresholds scale with C / 10 Mbit/s.
    q = t.red_profile(capacity)
    k = capacity / 10
    assert (q.min_packets, q.max_packets, q.max_p) == pytest.approx((25 * k, 50 * k, 0.1))
    assert q.gentle and q.weight == 0.002 and not q.instantaneous
    assert q.limit_packets >= 100 * k  # the physical buffer holds the gentle region


def test_red_profile_30_mbps_example() -> None:
    q = t.red_profile(30)
    assert (q.min_packets, q.max_packets, 2 * q.max_packets) == (75, 150, 300)


@pytest.mark.parametrize("n1", [10, 30])
def test_shared_ap_scenario_a(n1: int) -> None:
    s = t.shared_ap(n1=n1, n2=10, c1_mbps=1, c2_mbps=1, rtt_ms=150)
    assert s.link("server").capacity_mbps == n1 * 1
    assert s.link("ap").capacity_mbps == 10 * 1
    for bottleneck in ("server", "ap"):
        q = s.link(bottleneck).queue
        assert isinstance(q, RedQueue)
        assert q == t.red_profile(s.link(bottleneck).capacity_mbps)
    type1, type2 = s.flow("type1"), s.flow("type2")
    assert (type1.count, type2.count) == (n1, 10)
    assert type1.protocol == "mptcp" and type1.cc == "lia" and type2.protocol == "tcp"
    # The second subflow goes through the AP and then the server-side bottleneck.
    assert all("server" in p for p in type1.paths)
    assert sum("ap" in p for p in type1.paths) == 1
    assert all("server" not in p and "ap" in p for p in type2.paths)
    for flow in s.flows:
        for path in flow.paths:
            assert _path_rtt_ms(s, path) == pytest.approx(150)
    # The private access is never the bottleneck.
    assert s.link("access1").capacity_mbps >= 10 * s.link("server").capacity_mbps


def test_shared_ap_single_path_column() -> None:
    s = t.shared_ap(multipath=False, cc="olia")
    assert s.flow("type1").protocol == "tcp" and s.flow("type1").paths == [["server", "access1"]]


def test_multihomed_isp_scenario_b() -> None:
    s = t.multihomed_isp()
    caps = {link.id: link.capacity_mbps for link in s.links}
    assert caps == {"X": 27, "Y": 100, "Z": 100, "T": 36}
    assert caps["X"] + caps["T"] == 63  # the cut-set bound of the draft
    blue, red = s.flow("blue"), s.flow("red")
    assert (blue.count, red.count) == (15, 15)
    assert sorted(map(sorted, blue.paths)) == [["T", "Y", "Z"], ["X", "Z"]]
    assert red.protocol == "tcp" and [sorted(p) for p in red.paths] == [["T", "Y"]]
    both = t.multihomed_isp(red_multipath=True).flow("red")
    assert both.protocol == "mptcp" and sorted(map(sorted, both.paths)) == [["T", "X"], ["T", "Y"]]
    for scenario in (s, t.multihomed_isp(red_multipath=True, rtt_ms=100)):
        rtt = 150 if scenario is s else 100
        for flow in scenario.flows:
            for path in flow.paths:
                assert _path_rtt_ms(scenario, path) == pytest.approx(rtt)
        assert all(isinstance(link.queue, RedQueue) for link in scenario.links)


@pytest.mark.parametrize("n1", [10, 30])
def test_two_ap_scenario_c(n1: int) -> None:
    s = t.two_ap(n1=n1, n2=10)
    assert (s.link("ap1").capacity_mbps, s.link("ap2").capacity_mbps) == (n1, 10)
    multi, single = s.flow("multipath"), s.flow("singlepath")
    assert (multi.count, single.count) == (n1, 10)
    assert multi.paths == [["ap1"], ["ap2"]] and single.paths == [["ap2"]]
    assert single.protocol == "tcp" and multi.protocol == "mptcp"
    assert all(_path_rtt_ms(s, p) == 150 for f in s.flows for p in f.paths)


# ---- NSDI 2012 WiFi/3G ----------------------------------------------------------------------


def test_wifi_3g_paper_values() -> None:
    s = t.wifi_3g()
    wifi, cell = s.link("wifi"), s.link("3g")
    assert (wifi.capacity_mbps, _path_rtt_ms(s, ["wifi"])) == (8, 20)
    assert (cell.capacity_mbps, _path_rtt_ms(s, ["3g"])) == (2, 150)
    assert _buffer_bytes(s, "wifi") == pytest.approx(80_000)  # 80 ms = 80 KB
    assert _buffer_bytes(s, "3g") == pytest.approx(500_000)  # 2 s = 500 KB
    (flow,) = s.flows
    assert flow.protocol == "mptcp" and flow.paths == [["wifi"], ["3g"]]
    assert flow.app.kind == "blocks" and flow.app.block_bytes == 8 * 1024
    assert flow.rcvbuf_mode() == "fixed" and flow.rcvbuf_bytes == 32 * 1024
    assert flow.sndbuf_bytes == 200 * 1024
    assert (flow.penalization, flow.opportunistic_retransmit) == ("nsdi12", True)
    assert "blocks" in s.trace


@pytest.mark.parametrize("path", ["wifi", "3g"])
def test_wifi_3g_tcp_references(path: str) -> None:
    s = t.wifi_3g(path=path, rcvbuf_bytes=30_000)
    (flow,) = s.flows
    assert flow.protocol == "tcp" and flow.paths == [[path]] and flow.cc_kind() == "reno"
    assert flow.rcvbuf_bytes == 30_000 and flow.penalization is None
    assert s.links == t.wifi_3g().links


def test_wifi_3g_tcp_needs_a_path() -> None:
    with pytest.raises(UserError) as info:
        t.wifi_3g(protocol="tcp")
    assert info.value.field == "protocol"


# ---- BALIA draft, responsiveness ------------------------------------------------------------


def test_responsiveness_is_the_drafts_testbed() -> None:
    s = t.responsiveness()
    # Two 20 Mbit/s paths of 10 ms one way merging into a 40 Mbit/s server link, 200 s.
    assert [s.link(x).capacity_mbps for x in ("path1", "path2", "server")] == [20, 20, 40]
    mptcp, cross = s.flows
    assert mptcp.protocol == "mptcp" and mptcp.cc_kind() == "balia"
    assert [_path_rtt_ms(s, p) for p in mptcp.paths] == [20.0, 20.0]
    assert {hop for p in mptcp.paths for hop in p} == {"path1", "path2", "server"}
    # Five TCP flows share path 2 from 40 s to 80 s.
    assert cross.protocol == "tcp" and cross.count == 5 and cross.paths == [mptcp.paths[1]]
    assert (cross.start_s, cross.stop_s, s.duration_s) == (40.0, 80.0, 200.0)
    assert "cwnd" in s.trace and s.warmup_s < cross.start_s
    # The emulator's kernel schedules with linger only.
    assert t.responsiveness(scheduler="linger").flows[0].scheduler == "linger"


def test_responsiveness_sends_toward_the_server_whose_link_never_queues() -> None:
    """The draft sizes the server link as the sum of the two paths' (40 = 20 + 20 Mbit/s) and
    draws the senders on the paths' side: what the two 20 Mbit/s links pass, it carries without
    a queue, so the paths are the only bottlenecks, with or without the TCP flows on path 2."""
    from mptcplab import sim

    s = t.responsiveness(cross_start_s=4.0, cross_stop_s=8.0, duration_s=12.0, warmup_s=2.0)
    assert all(p[-1] == "server" for f in s.flows for p in f.paths)
    links = {link.id: link for link in sim.run(s).links}
    # At most the packet on the wire and one just in from each path.
    assert links["server"].drops == 0 and links["server"].max_queue_packets <= 3
    assert links["path1"].drops > 0 and links["path2"].drops > 0


@pytest.mark.parametrize(
    "params",
    [
        {"cross_start_s": 80.0, "cross_stop_s": 40.0},
        {"warmup_s": 40.0},
        {"cross_stop_s": 200.0},
    ],
)
def test_responsiveness_needs_a_reference_before_and_time_after_the_cross_traffic(
    params: dict,
) -> None:
    with pytest.raises(UserError) as info:
        t.responsiveness(**params)
    assert "warmup_s < cross_start_s < cross_stop_s < duration_s" in str(info.value)


# ---- the registry ---------------------------------------------------------------------------


def test_every_template_is_keyword_only_documented_and_registered() -> None:
    for name, fn in t.TEMPLATES.items():
        assert fn.__name__ == name
        params = inspect.signature(fn).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), name
        assert all(p.default is not inspect.Parameter.empty for p in params), name
        doc = inspect.getdoc(fn) or ""
        assert "spec §" in doc or "spec §" in (inspect.getmodule(fn).__doc__ or ""), name
        assert isinstance(t.make(name), Scenario)


def test_design_values_may_be_numpy_numbers() -> None:
    np = pytest.importorskip("numpy")
    s = t.two_path(capacity_mbps=np.array([1.0, 2.0]), rtt_ms=np.float64(30), rcvbuf=np.int64(9000))
    assert [link.capacity_mbps for link in s.links] == [1.0, 2.0]
    assert [link.delay_ms for link in s.links] == [15.0, 15.0]
    assert s.flows[0].rcvbuf_bytes == 9000 and type(s.flows[0].rcvbuf_bytes) is int
    a = t.shared_ap(n1=np.int64(30), multipath=np.bool_(False))
    assert a.flow("type1").count == 30 and a.flow("type1").protocol == "tcp"


def test_make_by_name_equals_the_direct_call() -> None:
    assert t.make("shared_ap", n1=30) == t.shared_ap(n1=30)
    assert t.make("two_path", capacity_mbps=[1, 2]) == t.two_path(capacity_mbps=(1, 2))


def test_make_unknown_template_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as info:
        t.make("two_paths")
    msg = info.value.detail
    assert "did you mean 'two_path'?" in msg
    assert all(name in msg for name in t.TEMPLATES)


def test_make_unknown_parameter_lists_the_accepted_ones() -> None:
    with pytest.raises(UserError) as info:
        t.make("two_path", capacity=(1, 2))
    err = info.value
    assert err.field == "capacity" and "did you mean 'capacity_mbps'?" in err.detail
    assert all(p in err.detail for p in t.parameters("two_path"))


@pytest.mark.parametrize(
    "name,params,field",
    [
        ("two_path", {"capacity_mbps": (1, 2, 3)}, "capacity_mbps"),
        ("two_path", {"capacity_mbps": (1, 0)}, "capacity_mbps[1]"),
        ("two_path", {"rtt_ms": "fast"}, "rtt_ms"),
        ("two_path", {"loss": (0, math.nan)}, "loss[1]"),
        ("two_path", {"loss": (0, 1.0)}, "loss[1]"),
        # Each factor finite, their product (the buffer) not.
        (
            "two_path",
            {"capacity_mbps": (10, 100), "queuing_delay_ms": (5, 1e308)},
            "queuing_delay_ms[1]",
        ),
        ("three_bottleneck", {"queuing_delay_ms": (5, 5, 1e308)}, "queuing_delay_ms[2]"),
        ("two_path", {"cc": "vegas"}, "cc"),
        ("two_path", {"rcvbuf": "big"}, "rcvbuf"),
        ("two_path", {"app": {"kind": "size"}}, "app.bytes"),
        ("two_path", {"warmup_s": 60}, "warmup_s"),
        ("single_path", {"path": 2}, "path"),
        ("two_path", {"loss_detection": "dupack"}, "loss_detection"),
        ("single_path", {"loss_detection": "RACK"}, "loss_detection"),
        ("shared_ap", {"n1": 0}, "n1"),
        ("shared_ap", {"multipath": "yes"}, "multipath"),
        ("multihomed_isp", {"ct_mbps": -1}, "ct_mbps"),
        ("wifi_3g", {"path": "lte"}, "path"),
        ("wifi_3g", {"trace": "blocks"}, "trace"),
    ],
)
def test_bad_parameters_name_the_parameter(name: str, params: dict, field: str) -> None:
    with pytest.raises(UserError) as info:
        t.make(name, **params)
    assert info.value.field == field
    assert "\n" not in str(info.value)
