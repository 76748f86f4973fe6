"""The simulator against published MPTCP results (spec §5.4, §5.6).

These runs take a few seconds each; tables are printed so that `pytest -s` shows the
comparison with the papers.
"""

from __future__ import annotations

import statistics

import pytest

from mptcplab import sim
from mptcplab.scenario.templates import make

# draft-khalili-mptcp-performance-issues-06, measured per-user goodput (Mbit/s), spec §5.4.
DRAFT = {
    ("two_ap", 10, "lia"): (1.30, 0.68),
    ("two_ap", 10, "olia"): (1.11, 0.88),
    ("two_ap", 30, "lia"): (1.19, 0.38),
    ("two_ap", 30, "olia"): (1.10, 0.72),
    ("shared_ap", 10, "lia"): (0.96, 0.70),
    ("shared_ap", 10, "olia"): (0.98, 0.86),
    ("shared_ap", 30, "lia"): (0.98, 0.44),
    ("shared_ap", 30, "olia"): (0.98, 0.75),
}
CLASSES = {"two_ap": ("multipath", "singlepath"), "shared_ap": ("type1", "type2")}
# The draft's paths have "RTT ≈ 150 ms including queueing delay" (spec §5.4): 110 ms of
# propagation plus the RED queues' delay gives a measured mean RTT of about 150 ms.
PROPAGATION_RTT_MS = 110.0
# OLIA as draft-khalili-mptcp-congestion-control-05 §3 specifies it (ssthresh floor of 1 MSS
# with two paths), the algorithm whose measurements the table reports; LIA keeps Linux's 2.
MIN_SSTHRESH = {"lia": None, "olia": 1}


def _per_class(name: str, n1: int, cc: str) -> tuple[float, float]:
    runs = []
    rtts = []
    for seed in (1, 2):
        report = sim.run(
            make(
                name,
                n1=n1,
                cc=cc,
                seed=seed,
                rtt_ms=PROPAGATION_RTT_MS,
                min_ssthresh_segments=MIN_SSTHRESH[cc],
            )
        )
        rtts.append(statistics.mean(s.mean_srtt_ms for f in report.flows for s in f.subflows))
        runs.append(
            [
                statistics.mean(f.goodput_mbps for f in report.flows if f.id.split("#")[0] == cls)
                for cls in CLASSES[name]
            ]
        )
    assert 130 <= statistics.mean(rtts) <= 175, f"mean RTT {statistics.mean(rtts):.0f} ms, not ≈150"
    return statistics.mean(r[0] for r in runs), statistics.mean(r[1] for r in runs)


@pytest.fixture(scope="module")
def khalili_results() -> dict[tuple[str, int, str], tuple[float, float]]:
    results = {key: _per_class(*key) for key in DRAFT}
    print("\nscenario   N1  cc     ours (class1, class2)   draft")
    for key, ours in results.items():
        print(
            f"{key[0]:9} {key[1]:3} {key[2]:5}  ({ours[0]:.3f}, {ours[1]:.3f})        {DRAFT[key]}"
        )
    return results


# Known misses, with what we know of them. The test stays strict: a miss that closes fails it.
KNOWN_MISSES = {
    (("shared_ap", 30, "lia"), 1): (
        "LIA's type-2 users (the AP alone) at N1 = 30 get 0.508 Mbit/s, 1.155x the draft's "
        "measured 0.44, at the tolerance's edge: 1.17x until FACK took a segment as lost with "
        "three segments SACKed above it (RFC 6675 §4), then 1.149x over this test's seeds 1-2 "
        "(1.153x over 1-10); opportunistic retransmission while the writer waits on the send "
        "buffer (1.1505x) and reinjection away from every subflow that carried a segment "
        "(1.155x), both as the out-of-tree kernel does them, took it back over."
    ),
    (("two_ap", 30, "lia"), 1): (
        "LIA's single-path users at N1 = 30 get 0.45 Mbit/s, 1.17x the draft's measured 0.38 "
        "(its own analysis gives 0.48). They got 0.39 while the simulator left its "
        "retransmission timer running when SACK recovery re-sends the head of the queue; "
        "Linux restarts it there (tcp_xmit_retransmit_queue), in 3.0 as now; without the "
        "restart the simulator timed out on a 1 %-loss path 3-7 times in 40 s (medians) where "
        "the kernel did not."
    ),
}


def _draft_cases():
    for key in DRAFT:
        for cls in (0, 1):
            miss = KNOWN_MISSES.get((key, cls))
            marks = [pytest.mark.xfail(strict=True, reason=miss)] if miss else []
            name, n1, cc = key
            yield pytest.param(key, cls, marks=marks, id=f"{name}-{n1}-{cc}-{CLASSES[name][cls]}")


@pytest.mark.parametrize(("key", "cls"), list(_draft_cases()))
def test_per_class_goodput_within_15_percent_of_the_draft(khalili_results, key, cls) -> None:
    got, want = khalili_results[key][cls], DRAFT[key][cls]
    close = abs(got / want - 1) <= 0.15
    assert close, f"{key} class {cls}: {got:.3f} vs draft {want}"


def test_olia_leaves_single_path_users_more_than_lia(khalili_results) -> None:
    for name, n1 in (("two_ap", 10), ("two_ap", 30), ("shared_ap", 10), ("shared_ap", 30)):
        lia = khalili_results[(name, n1, "lia")][1]
        olia = khalili_results[(name, n1, "olia")][1]
        assert olia > lia, f"{name} N1={n1}: OLIA {olia:.3f} ≤ LIA {lia:.3f}"


def test_receive_buffer_sweep_over_wifi_and_3g() -> None:
    """NSDI 2012 (Raiciu et al.) §5: with a small receive buffer, MPTCP without opportunistic
    retransmission and penalisation falls below TCP over WiFi; with both (penalisation in its
    2012 form, the paper's M2) it stays at or above it."""
    rows = []
    for kib in (16, 32, 64, 128, 256, 512, 1024):
        b = kib * 1024
        tcp = sim.run(make("wifi_3g", path="wifi", rcvbuf_bytes=b, duration_s=60, trace=[]))
        plain = sim.run(
            make(
                "wifi_3g",
                rcvbuf_bytes=b,
                penalization="off",
                opportunistic_retransmit=False,
                duration_s=60,
                trace=[],
            )
        )
        both = sim.run(make("wifi_3g", rcvbuf_bytes=b, duration_s=60, trace=[]))
        rows.append(
            (
                kib,
                tcp.flows[0].goodput_mbps,
                plain.flows[0].goodput_mbps,
                both.flows[0].goodput_mbps,
            )
        )
    print("\nrcvbuf KiB  TCP/WiFi  MPTCP plain  MPTCP M1+M2")
    for kib, tcp_g, plain_g, both_g in rows:
        print(f"{kib:10}  {tcp_g:8.3f}  {plain_g:11.3f}  {both_g:11.3f}")
    assert any(plain_g < 0.9 * tcp_g for _, tcp_g, plain_g, _ in rows), (
        "plain MPTCP never fell below TCP/WiFi"
    )
    for kib, tcp_g, plain_g, both_g in rows:
        assert both_g >= plain_g - 1e-9, f"{kib} KiB: M1+M2 worse than without"
        # "At or above": below 64 KiB WiFi fills the window alone and both give the same
        # goodput; 1 % allows for that tie.
        assert both_g >= 0.99 * tcp_g, (
            f"{kib} KiB: MPTCP with M1+M2 {both_g:.3f} vs TCP/WiFi {tcp_g:.3f}"
        )
    assert rows[-1][3] > rows[-1][1], "with a large buffer MPTCP must beat TCP over WiFi"


def _scenario_b(red_multipath: bool, seed: int) -> tuple[dict[str, float], float, float]:
    """Per-class mean goodput, Red's goodput over X (its second path) in all, and the mean RTT."""
    report = sim.run(
        make("multihomed_isp", red_multipath=red_multipath, rtt_ms=PROPAGATION_RTT_MS, seed=seed)
    )
    per_class = {
        cls: statistics.mean(f.goodput_mbps for f in report.flows if f.id.startswith(f"{cls}#"))
        for cls in ("blue", "red")
    }
    red_over_x = sum(
        s.goodput_mbps
        for f in report.flows
        if f.id.startswith("red#")
        for s in f.subflows
        if "X" in s.path
    )
    rtt = statistics.mean(s.mean_srtt_ms for f in report.flows for s in f.subflows)
    return per_class, red_over_x, rtt


def test_scenario_b_red_users_going_multipath_costs_every_user_with_lia() -> None:
    """draft-khalili-mptcp-performance-issues-06 §5, Scenario B ("MPTCP penalises other MPTCP
    users"): with LIA, when the Red users also run MPTCP both Blue and Red users get less than
    when Red stays single-path, LIA not being Pareto-optimal. Independent of the draft's
    figures: X and T (27 + 36 Mbit/s) are a cut every user crosses and a Red subflow over X
    crosses both, so all users' goodput plus that subflow's fits in the cut's payload rate."""
    cut_payload = (27.0 + 36.0) * 1448 / 1500
    for seed in (1, 2):
        single, none_over_x, rtt_single = _scenario_b(False, seed)
        multi, red_over_x, rtt_multi = _scenario_b(True, seed)
        print(f"\nScenario B, LIA, seed {seed}: Red single-path {single}, multipath {multi}")
        assert none_over_x == 0.0
        for rtt in (rtt_single, rtt_multi):
            assert 130 <= rtt <= 175, f"mean RTT {rtt:.0f} ms, not ≈150"
        for cls in ("blue", "red"):
            assert multi[cls] < single[cls], f"seed {seed}: {cls} gained when Red went multipath"
        for per_class, over_x in ((single, 0.0), (multi, red_over_x)):
            total = 15 * (per_class["blue"] + per_class["red"])
            assert total + over_x <= cut_payload * 1.001, f"{total:.2f} + {over_x:.2f} Mbit/s"
        # The waste is what the Red subflows over X carry, a sizeable part of the cut.
        assert red_over_x > 0.05 * cut_payload
