"""What the emulator refuses or notes, against a described kernel (no system access)."""

from __future__ import annotations

from typing import Any

import pytest

from mptcplab.backends.emu import kernel
from mptcplab.errors import UserError
from mptcplab.scenario.model import Scenario

KERNEL = kernel.KernelInfo(
    release="6.18",
    root=True,
    tun=True,
    netns=True,
    mptcp_enabled=True,
    available_cc=("reno", "bbr", "cubic"),
    allowed_cc=("reno", "bbr"),
    loadable_cc=(),
    schedulers=("default",),
    coupled_ok=False,
    coupled_reason="bpf/build is not built",
)


def _over_two_links(flows: list[dict[str, Any]]) -> Scenario:
    """``flows`` (each MPTCP over links a and b unless it says otherwise)."""
    base: dict[str, Any] = {"protocol": "mptcp", "paths": [["a"], ["b"]]}
    return Scenario.model_validate(
        {
            "duration_s": 1,
            "links": [
                {"id": "a", "capacity_mbps": 8, "delay_ms": 10},
                {"id": "b", "capacity_mbps": 2, "delay_ms": 75},
            ],
            "flows": [{**base, **flow} for flow in flows],
        }
    )


def scenario(**flow: Any) -> Scenario:
    return _over_two_links([{"id": "f", **flow}])


def notes_on(option: str, cc: str = "cubic", **tcp: Any) -> list[str]:
    """The notes about ``tcp.<option>`` for a flow on the kernel's scheduler with these options."""
    notes = kernel.check(scenario(cc=cc, scheduler="linger", tcp=tcp), KERNEL)
    return [n for n in notes if option in n]


def refusal(sc: Scenario, info: kernel.KernelInfo = KERNEL) -> UserError:
    with pytest.raises(UserError) as exc:
        kernel.check(sc, info)
    return exc.value


def test_uncoupled_cubic_with_the_kernel_scheduler_runs_with_notes_on_defaults() -> None:
    notes = kernel.check(scenario(cc="cubic", scheduler="linger"), KERNEL)
    text = " ".join(notes)
    assert "penalization" in text and "opportunistic_retransmit" in text


def test_the_default_minrtt_scheduler_is_refused_pointing_to_linger_and_the_simulator() -> None:
    err = refusal(scenario(cc="cubic"))
    assert err.field == "flows[0].scheduler"
    assert "minrtt" in str(err) and "(the default)" in str(err)
    assert 'scheduler = "linger"' in str(err) and "mptcplab sim" in str(err)


@pytest.mark.parametrize("sched", ["roundrobin", "redundant"])
def test_schedulers_the_kernel_lacks_are_refused(sched: str) -> None:
    assert refusal(scenario(cc="cubic", scheduler=sched)).field == "flows[0].scheduler"


def test_coupled_cc_without_the_bpf_modules_names_what_the_kernel_offers() -> None:
    err = refusal(scenario(scheduler="linger"))  # lia: the default for mptcp
    msg = str(err)
    assert err.field == "flows[0].cc"
    assert "'lia' (the default for mptcp)" in msg
    assert "bbr, cubic, reno" in msg and "mptcplab sim" in msg and "bpf/build" in msg


def test_coupled_cc_is_accepted_when_the_bpf_modules_are_loadable() -> None:
    info = kernel.KernelInfo(**{**KERNEL.__dict__, "coupled_ok": True, "coupled_reason": "ok"})
    kernel.check(scenario(cc="olia", scheduler="linger"), info)


def test_a_congestion_control_the_kernel_lacks_is_refused() -> None:
    info = kernel.KernelInfo(**{**KERNEL.__dict__, "available_cc": ("reno",)})
    err = refusal(scenario(cc="cubic", scheduler="linger"), info)
    assert "offers reno" in str(err)


def test_simulator_switches_set_explicitly_are_refused() -> None:
    err = refusal(scenario(cc="cubic", scheduler="linger", penalization="conext13"))
    assert err.field == "flows[0].penalization"
    err = refusal(scenario(cc="cubic", scheduler="linger", tcp={"rto_policy": "rfc6298"}))
    assert err.field == "flows[0].tcp.rto_policy"
    err = refusal(scenario(cc="cubic", scheduler="linger", tcp={"count_mode": "per_segment"}))
    assert err.field == "flows[0].tcp.count_mode"


def test_loss_detection_other_than_the_kernels_rack_is_noted() -> None:
    # Linux has found losses with RACK only since 4.15 dropped FACK.
    for tcp in ({"loss_detection": "fack"}, {}):
        notes = notes_on("loss_detection", **tcp)
        assert any("'fack'" in n and "RACK" in n for n in notes)
    assert not notes_on("loss_detection", loss_detection="rack")
    # Without SACK the option does not apply.
    assert not notes_on("loss_detection", sack=False)


def test_a_cwnd_limited_check_other_than_the_kernels_per_round_is_noted() -> None:
    # Linux has measured window use over a round of data since 3.16 (tcp_cwnd_validate).
    for tcp in ({"cwnd_limited_check": "per_ack"}, {}):
        assert any("'per_ack'" in n for n in notes_on("cwnd_limited_check", **tcp))
    assert not notes_on("cwnd_limited_check", cwnd_limited_check="per_round")


def test_a_rack_scenario_without_prr_is_noted() -> None:
    # Linux reduces its window in fast recovery by PRR (RFC 6937) since 3.2.
    without = kernel.check(
        scenario(cc="cubic", scheduler="linger", tcp={"loss_detection": "rack"}), KERNEL
    )
    assert any("tcp.prr" in n and "RFC 6937" in n for n in without)
    with_prr = kernel.check(
        scenario(cc="cubic", scheduler="linger", tcp={"loss_detection": "rack", "prr": True}),
        KERNEL,
    )
    assert not any("tcp.prr" in n for n in with_prr)
    # With FACK the loss_detection note already says what to set; PRR needs RACK.
    fack = kernel.check(scenario(cc="cubic", scheduler="linger"), KERNEL)
    assert not any("tcp.prr" in n for n in fack)


def test_cubic_other_than_the_kernels_is_noted() -> None:
    # The kernel's tcp_cubic.c keeps 8/15 per RTT and the 5 % floor (RFC 9438 has neither).
    for tcp in ({"cubic_variant": "rfc9438"}, {}):
        notes = notes_on("cubic_variant", **tcp)
        assert any("'rfc9438'" in n and "tcp_cubic.c" in n for n in notes)
    assert not notes_on("cubic_variant", cubic_variant="linux")
    # Other congestion controls do not read it.
    assert not notes_on("cubic_variant", cc="reno")


def test_receive_autotuning_other_than_the_kernels_is_noted() -> None:
    # Linux 6.16 on latches smaller receiver-RTT samples and adds no slack.
    for tcp in ({"drs_variant": "classic"}, {}):
        notes = notes_on("drs_variant", **tcp)
        assert any("'classic'" in n and "6.16" in n for n in notes)
    assert not notes_on("drs_variant", drs_variant="linux")
    # A fixed receive buffer is not auto-tuned.
    fixed = kernel.check(scenario(cc="cubic", scheduler="linger", rcvbuf_bytes=1 << 20), KERNEL)
    assert not any("drs_variant" in n for n in fixed)


def test_a_scenario_without_the_restart_after_idle_is_noted() -> None:
    # The emulator turns the kernel's restart off for it, unlike a kernel as shipped.
    without = kernel.check(scenario(cc="cubic", scheduler="linger"), KERNEL)
    assert any(
        "tcp.slow_start_after_idle" in n and "net.ipv4.tcp_slow_start_after_idle" in n
        for n in without
    )
    with_restart = kernel.check(
        scenario(cc="cubic", scheduler="linger", tcp={"slow_start_after_idle": True}), KERNEL
    )
    assert not any("slow_start_after_idle" in n for n in with_restart)


# The BALIA program floors ssthresh at one segment (as Linux mptcp_balia.c); the LIA program's
# ssthresh is tcp_reno_ssthresh (at least two segments) where the simulator honours one.
# Accepted, such a run would report a floor the kernel did not apply.
@pytest.mark.parametrize(
    ("cc", "refused", "words", "accepted"),
    [("balia", 2, "one segment", (None, 1)), ("lia", 1, "two segments", (None, 2))],
)
def test_a_floor_the_kernels_program_does_not_apply_is_refused(
    cc: str, refused: int, words: str, accepted: tuple[int | None, ...]
) -> None:
    info = kernel.KernelInfo(**{**KERNEL.__dict__, "coupled_ok": True, "coupled_reason": "ok"})
    err = refusal(scenario(cc=cc, scheduler="linger", tcp={"min_ssthresh_segments": refused}), info)
    assert err.field == "flows[0].tcp.min_ssthresh_segments"
    assert f"floors ssthresh at {words}" in str(err) and "mptcplab sim" in str(err)
    for floor in accepted:
        kernel.check(
            scenario(cc=cc, scheduler="linger", tcp={"min_ssthresh_segments": floor}), info
        )


def test_what_the_kernel_does_itself_is_accepted_explicitly() -> None:
    notes = kernel.check(
        scenario(cc="reno", scheduler="linger", penalization="off", opportunistic_retransmit=False),
        KERNEL,
    )
    assert not any("penalization" in n or "opportunistic" in n for n in notes)


def test_more_paths_than_the_path_manager_opens_are_refused() -> None:
    sc = Scenario.model_validate(
        {
            "duration_s": 1,
            "links": [{"id": f"l{i}", "capacity_mbps": 1, "delay_ms": 1} for i in range(10)],
            "flows": [
                {
                    "id": "f",
                    "protocol": "mptcp",
                    "cc": "cubic",
                    "scheduler": "linger",
                    "paths": [[f"l{i}"] for i in range(10)],
                }
            ],
        }
    )
    assert refusal(sc).field == "flows[0].paths"


def test_tcp_flows_ignore_the_mptcp_scheduler() -> None:
    sc = Scenario.model_validate(
        {
            "duration_s": 1,
            "links": [{"id": "a", "capacity_mbps": 8, "delay_ms": 10}],
            "flows": [{"id": "t", "protocol": "tcp", "paths": [["a"]]}],
        }
    )
    notes = kernel.check(sc, KERNEL)
    # (TCP matters, noted)
    noted = ("loss_detection", "cwnd_limited", "slow_start_after_idle", "drs_variant")
    assert [n for n in notes if not any(name in n for name in noted)] == []


SCENARIO_FILE = """\
duration_s = 5
[[links]]
id = "a"
capacity_mbps = 8
delay_ms = 10
[[links]]
id = "b"
capacity_mbps = 2
delay_ms = 75
[[flows]]
id = "f"
protocol = "mptcp"
cc = "cubic"
paths = [["a"], ["b"]]
"""


@pytest.mark.parametrize("overrides", [{}, {"seed": 3, "duration_s": 2.0, "trace": ["cwnd"]}])
@pytest.mark.parametrize(
    ("extra", "line_text", "shown"),
    [
        ("", "[[flows]]", "'minrtt' (the default)"),  # no key: the line of its table
        ('scheduler = "roundrobin"\n', 'scheduler = "roundrobin"', "'roundrobin' is not"),
    ],
)
def test_a_refusal_of_a_file_names_its_line_and_tells_a_default_from_a_setting(
    tmp_path, monkeypatch, overrides: dict, extra: str, line_text: str, shown: str
) -> None:
    from mptcplab import emu

    monkeypatch.setattr(kernel, "probe", lambda: KERNEL)  # refused before any system access
    text = SCENARIO_FILE + extra
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as exc:
        emu.run(path, **overrides)
    err = exc.value
    expected_line = text.splitlines().index(line_text) + 1
    assert (err.file, err.line, err.field) == (str(path), expected_line, "flows[0].scheduler")
    # --seed, --duration, --trace do not turn the file's defaults into settings.
    assert shown in str(err)


CAMPAIGN = """\
name = "refused"
seed = 1
replications = 1
backend = "emu"
metrics = ["goodput_mbps"]
design = { kind = "lhs", points = 2 }
factors.wifi = { low = 1.0, high = 20.0, param = "capacity_mbps[0]" }

[scenario]
template = "two_path"
cc = "cubic"
capacity_mbps = [10.0, 2.0]
"""


def test_an_emulator_campaign_the_kernel_cannot_run_is_refused_before_any_run(
    tmp_path, monkeypatch
) -> None:
    from mptcplab.campaign import backends, load, run_campaign

    monkeypatch.setattr(backends, "_kernel", lambda: KERNEL)  # no system access
    monkeypatch.setattr(backends, "emu_version", lambda: "linux 6.18 (described)")
    path = tmp_path / "refused.toml"
    path.write_text(CAMPAIGN, encoding="utf-8")
    store = tmp_path / "refused.sqlite"
    with pytest.raises(UserError) as exc:
        run_campaign(load(path), output=store, progress=False)
    err = exc.value
    # The template's scheduler (minrtt) is what the kernel lacks: refused once, at [scenario].
    assert (err.file, err.field) == (str(path), "scenario")
    assert err.line == CAMPAIGN.splitlines().index("[scenario]") + 1
    assert "backend 'emu'" in str(err) and 'set scheduler = "linger"' in str(err)
    assert not store.exists(), "nothing may run, nor a store be made, for a refused campaign"


def test_more_flows_than_the_emulator_polls_are_refused() -> None:
    assert kernel.check(scenario(cc="cubic", scheduler="linger", count=10_000), KERNEL)
    err = refusal(scenario(cc="cubic", scheduler="linger", count=10_001))
    assert err.field == "flows[0].count"
    assert "at most 10000 flows in all" in str(err) and "got 10001" in str(err)


def test_more_flow_entries_than_the_address_plan_holds_are_refused_by_name() -> None:
    # 4,097 entries raised a bare ValueError from the address plan, after the run's directory
    # was made and locked (every later run of the process then waited on it).
    def entries(n: int) -> Scenario:
        one = {"protocol": "tcp", "cc": "cubic", "paths": [["a"]]}
        links = [{"id": "a", "capacity_mbps": 8, "delay_ms": 10}]
        flows = [{**one, "id": f"f{k}"} for k in range(n)]
        return Scenario.model_validate({"duration_s": 1, "links": links, "flows": flows})

    assert kernel.check(entries(4096), KERNEL)
    err = refusal(entries(4097))
    assert err.field == "flows"
    assert "at most 4096 flow entries" in str(err) and "got 4097" in str(err)


def test_a_progress_that_cannot_be_called_is_refused_before_anything_starts() -> None:
    from mptcplab import emu

    with pytest.raises(TypeError, match="progress: expected a callable, got int"):
        emu.run(scenario(), progress=5)  # type: ignore[arg-type]


def test_a_send_buffer_below_the_kernels_minimum_is_refused() -> None:
    # The kernel raises a smaller send buffer to SOCK_MIN_SNDBUF (4608 bytes): a scenario of
    # 3000 bytes would have run on 4608.
    assert kernel.check(scenario(cc="cubic", scheduler="linger", sndbuf_bytes=4608), KERNEL)
    err = refusal(scenario(cc="cubic", scheduler="linger", sndbuf_bytes=4607))
    assert err.field == "flows[0].sndbuf_bytes"
    assert "at least 4608 bytes in the kernel" in str(err) and "got 4607" in str(err)
    assert "mptcplab sim" in str(err)


def test_a_trace_interval_shorter_than_the_emulator_samples_is_refused() -> None:
    # At 0.001 ms linkem fell behind, was stopped before its final status and the run ended
    # in a bare RuntimeError; the traffic programs sampled at 1 ms whatever was asked.
    def traced(interval: float) -> Scenario:
        sc = scenario(cc="cubic", scheduler="linger")
        return sc.model_copy(update={"trace_interval_ms": interval})

    assert kernel.check(traced(1.0), KERNEL)
    err = refusal(traced(0.5))
    assert err.field == "trace_interval_ms"
    assert "at most every 1 ms" in str(err) and "got 0.5 ms" in str(err)
    assert "mptcplab sim" in str(err)


def _two_coupled(first: dict[str, Any], second: dict[str, Any]) -> Scenario:
    return _over_two_links(
        [
            {"id": "x", "scheduler": "linger", **first},
            {"id": "y", "scheduler": "linger", **second},
        ]
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"cc": "olia", "tcp": {"min_ssthresh_segments": 1}}, {"cc": "lia"}),
        ({"cc": "olia"}, {"cc": "balia", "tcp": {"min_ssthresh_segments": 1}}),
        ({"cc": "olia", "tcp": {"min_ssthresh_segments": 1}}, {"cc": "balia"}),
    ],
)
def test_olias_floor_is_asked_of_olia_flows_only(first: dict, second: dict) -> None:
    """OLIA's ssthresh floor is its own registration's option: LIA (2) and BALIA (1) keep
    theirs, so a run mixing them with OLIA at either floor is one the kernel can give."""
    info = kernel.KernelInfo(**{**KERNEL.__dict__, "coupled_ok": True, "coupled_reason": "ok"})
    kernel.check(_two_coupled(first, second), info)
    floor = first.get("tcp", {}).get("min_ssthresh_segments", 2)
    options = kernel._coupled_options(_two_coupled(first, second))
    assert options is not None and options["olia_min_ssthresh"] == floor


def test_two_olia_flows_with_different_floors_are_refused() -> None:
    info = kernel.KernelInfo(**{**KERNEL.__dict__, "coupled_ok": True, "coupled_reason": "ok"})
    sc = _two_coupled(
        {"cc": "olia", "tcp": {"min_ssthresh_segments": 1}},
        {"cc": "olia", "tcp": {"min_ssthresh_segments": 2}},
    )
    err = refusal(sc, info)
    assert err.field == "flows[1].tcp.min_ssthresh_segments"
    assert "same for every OLIA flow" in str(err)
