"""Coupled congestion control on the real kernel: what LIA, OLIA and BALIA must show on whole
connections in the emulator (RFC 6356 §3 goals; Khalili et al., "MPTCP is not Pareto-optimal",
CoNEXT 2012 / ToN 2013 for OLIA; Peng et al., "Multipath TCP: analysis, design and
implementation", ToN 2016 for BALIA), each beside the simulator's figure for the same scenario.

- On one path a coupled controller is Reno (RFC 6356 §3: with one subflow the increase is
  1/w per ACK, the decrease w/2): goodput within 5 % of Reno's where the sawtooth, not the link,
  sets the goodput (a buffer of a quarter of the bandwidth-delay product keeps Reno below
  capacity after every halving). So is an MPTCP connection with one subflow, also with delayed
  ACKs, where Reno counts the two segments an ACK covers (loss-limited: 0.9x Reno or more).
- Shared bottleneck (goal 2, "do no harm"): MPTCP connections with two subflows through the
  link of as many TCP Reno flows, all limited by the link's 2 % random loss, take 0.7–1.4× the
  TCP flows' goodput (four of each, compared in total, to keep a short run's noise down);
  uncoupled Reno subflows take about 2× (two Reno flows against one) — more than 1.3× is
  asserted, a margin that noise in an 18 s measurement does not cross while the 2× expectation
  stays well above it.
- Two disjoint paths with 1 % and 0.1 % random loss (goal 3, balance congestion: move traffic
  off the most congested path): a coupled connection sends at most 0.75× what uncoupled Reno
  subflows send over the lossy path. Uncoupled Reno splits as 1/√p (clean-path share about
  0.76) and LIA's equilibrium windows go as 1/p (about 0.91), so the lossy path's rate falls
  to roughly 0.4×. The clean-path shares are printed too, but the share moves by less than
  its run-to-run noise in a short run; the lossy path's rate moves by much more.
  The same runs trace each subflow's window and slow-start threshold every 10 ms: in
  congestion avoidance (window at or above a threshold that did not change between two
  samples) no window grows by more than one segment from one sample to the next, in either
  backend. Every controller here needs at least two thirds of a window's worth of ACKs for a
  segment (Reno and LIA a window's worth, RFC 6356 §3; BALIA's increase is at most Reno's;
  OLIA's ε adds at most half of Reno's with two paths), and a 10 ms step of a 100 ms path
  sees a tenth of a window's ACKs. Linux restarts the count toward the next
  increase at every window reduction (snd_cwnd_cnt = 0); a counter carried over from the
  window before the loss shows up as a jump of several segments right after recovery.
  The simulator times out on these paths at most two times more than the kernel in the same
  run (Linux restarts the retransmission timer when it re-sends the head of its queue,
  ``tcp_xmit_retransmit_queue``; RFC 6298 alone leaves a recovery that starts late on a small
  window to the timer).
- Nothing is left behind: no namespace, no registration, no BPF map after a run; after SIGKILL
  of a running ``mptcplab emu`` and ``mptcplab clean``, none either.

Runs take 16-20 s, those on lossy paths 40 s; the variants a test compares run side by side
(about 2.5 minutes for the file).
Rates stay at 10 Mbit/s or below per link (the shared bottleneck's 40 Mbit/s is not filled: its
four connections and four TCP flows are loss-limited to about 2 Mbit/s each) so the link
emulator keeps up; a run it could not keep up with is run again, and the test is skipped, not
passed, if it could not keep up twice.
Skipped with the reason when not root, without the emulator or without BPF struct_ops
congestion control.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from kcc_helpers import in_force, registered_ccs, wait_until_no_bpf_objects

from mptcplab import emu, sim
from mptcplab.backends import kernel_cc
from mptcplab.backends.emu import kernel as emu_kernel
from mptcplab.backends.emu import netns, rundir
from mptcplab.backends.emu.addressing import run_id_of_namespace

# The `run_cli` fixture of tests/conftest.py.
CliRunner = Callable[..., subprocess.CompletedProcess[str]]

pytestmark = pytest.mark.root

COUPLED = ("lia", "olia", "balia")
DURATION_S = 16.0
WARMUP_S = 2.0
SHARED_DURATION_S = 20.0
SHARED_PAIRS = 4


@pytest.fixture(scope="module")
def kernel(bpf_built: Path) -> None:
    ok, reason = emu.available()
    if not ok:
        pytest.skip(f"emulator unavailable: {reason}")


def _checked(report: dict[str, Any]) -> dict[str, Any]:
    for flow in report["backend"]["flows"].values():
        assert flow["error"] is None and not flow["mptcp_fallback"], flow
    return report


def _run_side_by_side(
    scenarios: list[dict[str, Any]],
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(emulator report, simulator report) of each scenario, the emulator runs at the same
    time: each has its own namespaces and link emulator. A run the emulator itself slowed down
    (releases late; a busy host) is no evidence either way: those runs are tried once more,
    again side by side, and the test is skipped if one is slowed again. A coupled controller's
    registration serves every run (they use the same options), and none is unregistered while
    another run is alive."""

    def emulate_all(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        with ThreadPoolExecutor(max_workers=len(batch)) as pool:
            return list(pool.map(emu.run, batch))

    reports = emulate_all(scenarios)
    slowed = [i for i, report in enumerate(reports) if report["fidelity"]["emulation_bottleneck"]]
    if slowed:
        for i, report in zip(slowed, emulate_all([scenarios[i] for i in slowed]), strict=True):
            if report["fidelity"]["emulation_bottleneck"]:
                pytest.skip(
                    f"the emulator was the bottleneck twice: {report['fidelity']['problems']}"
                )
            reports[i] = report
    return [
        (_checked(report), sim.run(scenario).to_dict())
        for scenario, report in zip(scenarios, reports, strict=True)
    ]


def _mptcp(cc: str, paths: list[list[str]]) -> dict[str, Any]:
    return {
        "id": "mptcp",
        "protocol": "mptcp",
        "cc": cc,
        "scheduler": "linger",
        "penalization": "off",
        "opportunistic_retransmit": False,
        "paths": paths,
    }


def _link(link_id: str, mbps: float, one_way_ms: float, queue_ms: float, loss: float = 0.0):
    return {
        "id": link_id,
        "capacity_mbps": mbps,
        "delay_ms": one_way_ms,
        "queue": {"kind": "droptail", "ms": queue_ms},
        "loss": loss,
    }


def _flow(report: dict[str, Any], flow_id: str) -> dict[str, Any]:
    return next(f for f in report["flows"] if f["id"] == flow_id)


def _print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n{title}")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


# --- one path: Reno ----------------------------------------------------------------------------


def single_path(cc: str) -> dict[str, Any]:
    # 10 Mbit/s, 40 ms RTT: BDP ≈ 34 packets; a 10 ms buffer (≈ 9 packets, a quarter BDP)
    # leaves the link idle after each halving, so the goodput follows the controller.
    return {
        "duration_s": DURATION_S,
        "warmup_s": WARMUP_S,
        "seed": 1,
        "links": [_link("path", 10.0, 20.0, 10.0)],
        "flows": [{"id": "tcp", "protocol": "tcp", "cc": cc, "paths": [["path"]]}],
    }


def test_lia_on_one_tcp_path_behaves_like_reno(kernel: None) -> None:
    (reno, reno_sim), (lia, lia_sim) = _run_side_by_side([single_path("reno"), single_path("lia")])
    assert reno["backend"]["flows"]["tcp"]["congestion_control"] == "reno"
    assert lia["backend"]["flows"]["tcp"]["congestion_control"] == "mptcp_lia"
    g_reno = _flow(reno, "tcp")["goodput_mbps"]
    g_lia = _flow(lia, "tcp")["goodput_mbps"]
    _print_table(
        "one TCP flow, 10 Mbit/s, 40 ms RTT, 10 ms buffer",
        ["cc", "emu Mbit/s", "sim Mbit/s"],
        [
            ["reno", f"{g_reno:.3f}", f"{_flow(reno_sim, 'tcp')['goodput_mbps']:.3f}"],
            ["mptcp_lia", f"{g_lia:.3f}", f"{_flow(lia_sim, 'tcp')['goodput_mbps']:.3f}"],
        ],
    )
    assert g_reno > 1.0
    assert abs(g_lia - g_reno) <= 0.05 * g_reno, (g_lia, g_reno)


def one_path_connection(protocol: str, cc: str) -> dict[str, Any]:
    # Loss-limited (1 % random loss, 10 Mbit/s, 40 ms RTT): Reno's rate goes as the square root
    # of its increase per round trip (Mathis et al.), so an increase half as fast shows as
    # about 0.71x. With delayed ACKs an ACK covers two segments, which Reno counts and a
    # per-ACK count of the coupled increase would not.
    flow = (
        {"id": "flow", "protocol": "tcp", "cc": cc, "paths": [["path"]]}
        if protocol == "tcp"
        else {**_mptcp(cc, [["path"]]), "id": "flow"}
    )
    return {
        "duration_s": SHARED_DURATION_S,
        "warmup_s": WARMUP_S,
        "seed": 1,
        "links": [_link("path", 10.0, 20.0, 40.0, loss=0.01)],
        "flows": [{**flow, "tcp": {"delayed_ack": True}}],
    }


def test_a_one_path_mptcp_connection_is_reno_also_with_delayed_acks(kernel: None) -> None:
    """RFC 6356 §3: with one path the coupled increase is Reno's; the simulator runs such a
    subflow as Reno, counting acknowledged segments, and so must the kernel's programs."""
    variants = [("tcp", "reno"), ("mptcp", "lia"), ("mptcp", "olia"), ("mptcp", "balia")]
    runs = _run_side_by_side([one_path_connection(p, cc) for p, cc in variants])
    goodputs = {
        cc: _flow(emu_report, "flow")["goodput_mbps"]
        for (_, cc), (emu_report, _) in zip(variants, runs, strict=True)
    }
    _print_table(
        "one connection on one path, delayed ACKs, 1 % loss, 10 Mbit/s, 40 ms RTT",
        ["protocol", "cc", "emu Mbit/s", "sim Mbit/s"],
        [
            [p, cc, f"{goodputs[cc]:.3f}", f"{_flow(sim_report, 'flow')['goodput_mbps']:.3f}"]
            for (p, cc), (_, sim_report) in zip(variants, runs, strict=True)
        ],
    )
    reno = goodputs["reno"]
    assert reno > 1.0
    for cc in COUPLED:
        # Counted per ACK the programs gave 0.81-0.85x here (Linux ACKs some segments at
        # once, so not the 0.71x of an ACK every two); counted as Reno, 0.98x.
        assert goodputs[cc] >= 0.9 * reno, (cc, goodputs)


# --- shared bottleneck: do no harm -------------------------------------------------------------


def shared_bottleneck(cc: str) -> dict[str, Any]:
    # The goal's analysis (RFC 6356 §3; Khalili et al. §4 for OLIA) assumes every flow through
    # the link sees the same per-packet loss probability. A drop-tail queue alone does not give
    # that: its losses come in bursts that hit all flows at once, and from the initial split
    # OLIA needs tens of seconds to even out its subflows (simulator, 40 ms queue and no random
    # loss: 0.38× TCP over seconds 2-16, 0.95× over 2-120). A 2 % random loss keeps all three
    # flows loss-limited (Reno's 1.22·MSS/(RTT·√p) ≈ 2 Mbit/s at 40-60 ms RTT) well below
    # the link's capacity, which is the regime the goal speaks of. One MPTCP connection against
    # one TCP flow gives a ratio whose run-to-run spread is about ±0.15 in 14 s (a fresh-clone
    # run saw BALIA at 1.42); four of each, compared in total, halve it at the same cost: over
    # seeds 1-20 the simulator puts LIA, OLIA and BALIA at 0.77-1.09x and uncoupled Reno at
    # 1.73-2.10x.
    return {
        "duration_s": SHARED_DURATION_S,
        "warmup_s": WARMUP_S,
        "seed": 3,
        "links": [_link("shared", 40.0, 20.0, 20.0, 0.02)],
        "flows": [
            {**_mptcp(cc, [["shared"], ["shared"]]), "count": SHARED_PAIRS},
            {
                "id": "tcp",
                "protocol": "tcp",
                "cc": "reno",
                "paths": [["shared"]],
                "count": SHARED_PAIRS,
            },
        ],
    }


def _total(report: dict[str, Any], flow_id: str) -> float:
    flows = [f for f in report["flows"] if f["id"].split("#")[0] == flow_id]
    assert len(flows) == SHARED_PAIRS, [f["id"] for f in report["flows"]]
    return sum(f["goodput_mbps"] for f in flows)


def test_coupled_cc_is_fair_to_tcp_at_a_shared_bottleneck(kernel: None) -> None:
    ratios: dict[str, float] = {}
    rows = []
    ccs = (*COUPLED, "reno")
    for cc, (report, simulated) in zip(
        ccs, _run_side_by_side([shared_bottleneck(cc) for cc in ccs]), strict=True
    ):
        for f in report["flows"]:
            if f["id"].startswith("mptcp"):
                assert len(f["subflows"]) == 2, f
        mptcp, tcp = _total(report, "mptcp"), _total(report, "tcp")
        ratios[cc] = mptcp / tcp
        s_mptcp, s_tcp = _total(simulated, "mptcp"), _total(simulated, "tcp")
        rows.append(
            [
                cc,
                f"{mptcp:.3f}",
                f"{tcp:.3f}",
                f"{ratios[cc]:.2f}",
                f"{s_mptcp:.3f}",
                f"{s_tcp:.3f}",
                f"{s_mptcp / s_tcp:.2f}",
            ]
        )
    _print_table(
        f"shared bottleneck, 2 % loss: {SHARED_PAIRS} MPTCP connections (2 subflows each) vs "
        f"{SHARED_PAIRS} TCP Reno flows, totals",
        ["MPTCP cc", "emu MPTCP", "emu TCP", "emu ratio", "sim MPTCP", "sim TCP", "sim ratio"],
        rows,
    )
    for cc in COUPLED:
        assert 0.7 <= ratios[cc] <= 1.4, (cc, ratios)
    assert ratios["reno"] > 1.3, ratios


# --- lossy paths: balance congestion -----------------------------------------------------------


LOSSY_DURATION_S = 40.0
MSS_BYTES = 1448


def lossy_paths(cc: str) -> dict[str, Any]:
    # 100 ms RTT: Reno's loss-limited rates (1.22·MSS/(RTT·√p): 1.4 and 4.5 Mbit/s) stay below
    # the 8 Mbit/s links, so the losses, not the capacities, decide the split. The lossy path
    # sees about one loss a second: 38 s measured keep the rates' noise well inside the bound
    # (simulator, seeds 1-30: lossy-path rate of a coupled connection at most 0.68x the lowest
    # uncoupled one; at 14 s measured the ranges overlapped).
    return {
        "duration_s": LOSSY_DURATION_S,
        "warmup_s": WARMUP_S,
        "seed": 5,
        "trace": ["cwnd", "ssthresh"],
        "trace_interval_ms": 10.0,
        "links": [_link("lossy", 8.0, 50.0, 50.0, 0.01), _link("clean", 8.0, 50.0, 50.0, 0.001)],
        "flows": [_mptcp(cc, [["lossy"], ["clean"]])],
    }


def _path_goodput(report: dict[str, Any], path: str) -> float:
    subflows = _flow(report, "mptcp")["subflows"]
    return sum(s["goodput_mbps"] for s in subflows if s["path"] == [path])


def _clean_share(report: dict[str, Any]) -> float:
    return _path_goodput(report, "clean") / _flow(report, "mptcp")["goodput_mbps"]


def _avoidance_jumps(report: dict[str, Any]) -> list[str]:
    """Steps between two trace samples in which a window at or above an unchanged slow-start
    threshold grew by more than one segment."""
    traces = report["traces"]
    thresholds = {s["name"]: s["values"] for s in traces["ssthresh"]}
    jumps = []
    for series in traces["cwnd"]:
        cwnd, ssthresh = series["values"], thresholds[series["name"]]
        for k in range(1, len(cwnd)):
            avoiding = 0 < ssthresh[k - 1] == ssthresh[k] <= cwnd[k - 1]
            if avoiding and cwnd[k] - cwnd[k - 1] > MSS_BYTES:
                jumps.append(
                    f"{series['name']} at {traces['time_s'][k]:.2f} s: "
                    f"{cwnd[k - 1] / MSS_BYTES:g} -> {cwnd[k] / MSS_BYTES:g} segments "
                    f"(ssthresh {ssthresh[k] / MSS_BYTES:g})"
                )
    return jumps


def _timeouts(report: dict[str, Any]) -> int:
    return sum(s["timeouts"] for s in _flow(report, "mptcp")["subflows"])


def test_coupled_cc_moves_traffic_off_the_lossy_path(kernel: None) -> None:
    lossy: dict[str, float] = {}
    timeouts: dict[str, tuple[int, int]] = {}
    rows = []
    jumps: dict[str, list[str]] = {}
    ccs = ("reno", *COUPLED)
    for cc, (report, simulated) in zip(
        ccs, _run_side_by_side([lossy_paths(cc) for cc in ccs]), strict=True
    ):
        jumps |= {f"{cc} emu": _avoidance_jumps(report), f"{cc} sim": _avoidance_jumps(simulated)}
        lossy[cc] = _path_goodput(report, "lossy")
        timeouts[cc] = (_timeouts(report), _timeouts(simulated))
        rows.append(
            [
                cc,
                f"{_flow(report, 'mptcp')['goodput_mbps']:.3f}",
                f"{lossy[cc]:.3f}",
                f"{_clean_share(report):.3f}",
                f"{_flow(simulated, 'mptcp')['goodput_mbps']:.3f}",
                f"{_path_goodput(simulated, 'lossy'):.3f}",
                f"{_clean_share(simulated):.3f}",
                f"{timeouts[cc][0]} / {timeouts[cc][1]}",
            ]
        )
    _print_table(
        "two paths, 1 % and 0.1 % loss, 100 ms RTT: Mbit/s over the lossy path, clean share",
        [
            "cc",
            "emu Mbit/s",
            "emu lossy",
            "emu clean share",
            "sim Mbit/s",
            "sim lossy",
            "sim clean share",
            "timeouts emu / sim",
        ],
        rows,
    )
    for cc in COUPLED:
        assert lossy[cc] <= 0.75 * lossy["reno"], (cc, lossy)
    # Small windows on the lossy path make recoveries slow to start: the kernel rides them out
    # because re-sending the head restarts its timer; a simulator without that timed out 4-8
    # times here where the kernel did not.
    for cc, (emulated, simulated) in timeouts.items():
        assert simulated <= emulated + 2, (cc, timeouts)
    assert not any(jumps.values()), {run: found[:5] for run, found in jumps.items() if found}


# --- nothing left behind -----------------------------------------------------------------------


def _our_namespaces(run_id: str | None = None) -> list[str]:
    names = [n for n in netns.list_namespaces() if run_id_of_namespace(n) is not None]
    return [n for n in names if run_id is None or run_id_of_namespace(n) == run_id]


@pytest.fixture(scope="module")
def finished_coupled_run(kernel: None) -> dict[str, Any]:
    return emu.run({**shared_bottleneck("lia"), "duration_s": 3.0, "warmup_s": 1.0})


def test_a_coupled_run_leaves_no_namespace(finished_coupled_run: dict[str, Any]) -> None:
    assert _our_namespaces(finished_coupled_run["backend"]["run_id"]) == []


def test_a_coupled_run_leaves_no_registration_or_map(
    finished_coupled_run: dict[str, Any],
) -> None:
    assert not registered_ccs() & set(kernel_cc.NAMES), "the run left a registration"
    # The traffic programs reset their connections on close (SO_LINGER 0); a graceful close
    # kept the sockets, and with them the maps, for the 60 s of TIME-WAIT.
    assert wait_until_no_bpf_objects() == []


def test_a_connection_left_on_another_algorithm_fails_the_run(
    kernel: None, clean_kernel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the registration skipped, the kernel takes "mptcp_lia" on the MPTCP socket without
    # a word and runs the subflows on its default algorithm; the run must say so, not report
    # that default's figures as LIA's.
    monkeypatch.setattr(emu_kernel, "load_coupled", lambda scenario, *rest: None)
    default = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    scenario = {**single_path("reno"), "duration_s": 2.0, "warmup_s": 0.5}
    scenario["flows"] = [_mptcp("lia", [["path"]])]
    with pytest.raises(emu.EmulatorError) as info:
        emu.run(scenario)
    assert f"mptcp asked for mptcp_lia and ran {default}" in str(info.value)


def test_a_run_is_alive_before_it_registers_its_controller(
    kernel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another run ending sees it alive and leaves the registration to it
    # (unload_coupled_if_idle); registered first, it could lose it in between.
    class Registering(Exception):
        pass

    before = set(rundir.run_ids())
    alive: list[set[str]] = []

    def load(scenario: Any, *rest: Any) -> None:
        alive.append({r for r in rundir.run_ids() if rundir.is_alive(r)} - before)
        raise Registering

    monkeypatch.setattr(emu_kernel, "load_coupled", load)
    with pytest.raises(Registering):
        emu.run({**single_path("reno"), "flows": [_mptcp("lia", [["path"]])]})
    assert len(alive) == 1 and len(alive[0]) == 1, alive
    assert set(rundir.run_ids()) - before == set(), "the run's directory outlived it"


def test_a_run_needing_other_options_waits_for_the_run_holding_the_registration(
    kernel: None, clean_kernel: None
) -> None:
    # Replaced under a live run, the registration would give that run's later sockets the
    # other run's options without a word; the second run waits instead.
    first_scenario = {**single_path("reno"), "duration_s": 4.0, "warmup_s": 1.0}
    first_scenario["flows"] = [_mptcp("olia", [["path"]])]
    second_scenario = {**first_scenario, "duration_s": 2.0, "warmup_s": 0.5}
    second_scenario["flows"] = [{**_mptcp("olia", [["path"]]), "tcp": {"min_ssthresh_segments": 1}}]
    before = set(rundir.run_ids())
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(emu.run, first_scenario)
        first_id = _new_live_run(before)
        floors_while_waiting: list[int] = []
        stages: list[str] = []

        def progress(stage: str, traffic_s: float, duration_s: float) -> None:
            if stage.startswith("waiting"):
                floors_while_waiting.append(in_force("mptcp_olia")["config"]["olia_min_ssthresh"])
            if not stages or stages[-1] != stage:
                stages.append(stage)

        second = emu.run(second_scenario, progress=progress)
        first_report = first.result()
    assert stages[0] == f"waiting for run {first_id}", stages
    assert floors_while_waiting and set(floors_while_waiting) == {2}, floors_while_waiting
    for report, floor in ((first_report, 2), (second, 1)):
        coupled = report["backend"]["coupled_congestion_control"]
        options = coupled["congestion_controls"]["mptcp_olia"]["options"]
        assert options["olia_min_ssthresh"] == floor, report["backend"]


def _new_live_run(before: set[str], timeout_s: float = 30.0) -> str:
    """The run started since ``before`` once its linkem and traffic programs are up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for run_id in set(rundir.run_ids()) - before:
            if len(rundir.recorded_pids(run_id)) >= 3 and rundir.is_alive(run_id):
                return run_id
        time.sleep(0.05)
    raise AssertionError("the run did not start")


def test_a_killed_coupled_run_is_cleaned_of_namespaces_registrations_and_maps(
    kernel: None, tmp_path: Path, run_cli: CliRunner
) -> None:
    path = tmp_path / "long.json"
    path.write_text(json.dumps({**shared_bottleneck("olia"), "duration_s": 60.0}))
    before = set(rundir.run_ids())
    proc = subprocess.Popen([sys.executable, "-m", "mptcplab.cli", "emu", str(path)])
    try:
        run_id = _new_live_run(before)
        time.sleep(3.0)  # connections up and carrying data under the coupled controller
        assert "mptcp_olia" in registered_ccs()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert _our_namespaces(run_id), "SIGKILL leaves the namespaces for `mptcplab clean`"
        out = run_cli("clean")
        assert out.returncode == 0, out.stderr
        assert _our_namespaces(run_id) == []
        assert not registered_ccs() & set(kernel_cc.NAMES), out.stdout
        assert wait_until_no_bpf_objects() == []
    finally:
        if proc.poll() is None:
            proc.kill()
