"""What the running kernel offers, and whether a scenario can run on it.

The emulator runs the kernel's own TCP and MPTCP, so a scenario may only ask for what the
kernel has (spec §3.8, upstream MPTCP): congestion controls that are loaded or loadable (and
LIA/OLIA/BALIA only through the BPF implementations of ``backends/kernel_cc.py``), and the
kernel's one packet scheduler, which picks the subflow with the shortest *linger time* (the
scenario's ``linger``). Simulator-model switches the kernel does not have (penalisation,
opportunistic retransmission, RFC 6298 timers, an explicit join delay…) are refused when the
scenario sets them to something the kernel does not do, and listed in the report's ``backend``
block when they are only left at a simulator default.
"""

from __future__ import annotations

import os
import platform
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from mptcplab.backends.emu.addressing import MAX_GROUPS
from mptcplab.errors import UserError
from mptcplab.scenario.model import FlowSpec, Scenario

#: The kernel path manager's limit on additional subflows (MPTCP_PM_ADDR_MAX).
MAX_EXTRA_SUBFLOWS = 8
#: How often a run waiting for another's coupled registration asks again, seconds.
_BUSY_POLL_S = 0.5
# Flows of one emulated run: 5,000 ran (the emulator said it was the bottleneck); beyond the
# file-descriptor limits and the single traffic program's polling, nothing is measured.
MAX_EMULATED_FLOWS = 10_000
#: Scenario congestion control → kernel TCP_CONGESTION name.
KERNEL_CC = {
    "reno": "reno",
    "cubic": "cubic",
    "lia": "mptcp_lia",
    "olia": "mptcp_olia",
    "balia": "mptcp_balia",
}
COUPLED = ("lia", "olia", "balia")
SIMULATOR_HINT = "or run this scenario on the simulator (mptcplab sim)"

#: The shortest trace interval the emulator samples at: the traffic programs read TCP_INFO
#: once per flow and interval, and linkem its queues, in real time (at 0.001 ms linkem fell
#: behind and was stopped before it wrote its final status).
MIN_EMULATED_TRACE_INTERVAL_MS = 1.0

#: SOCK_MIN_SNDBUF (include/net/sock.h): twice TCP_SKB_MIN_TRUESIZE, 2048 bytes and an
#: aligned sk_buff; the kernel raises a smaller send buffer to it.
KERNEL_MIN_SNDBUF_BYTES = 2 * (2048 + 256)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def kernel_cc_module() -> ModuleType | None:
    """``mptcplab.backends.kernel_cc`` when it is part of this build."""
    try:
        from mptcplab.backends import kernel_cc
    except ImportError:
        return None
    return kernel_cc


@dataclass(frozen=True)
class KernelInfo:
    release: str
    root: bool
    tun: bool
    netns: bool
    mptcp_enabled: bool | None
    #: Loaded congestion controls (net.ipv4.tcp_available_congestion_control).
    available_cc: tuple[str, ...]
    #: Those an unprivileged namespace may select by sysctl (root-only list).
    allowed_cc: tuple[str, ...]
    #: Congestion controls built as modules that a privileged socket can load on demand.
    loadable_cc: tuple[str, ...]
    schedulers: tuple[str, ...]
    coupled_ok: bool
    coupled_reason: str
    missing_tools: tuple[str, ...] = field(default=())

    def offers_cc(self, name: str) -> bool:
        return name in self.available_cc or name in self.loadable_cc

    def cc_offer(self) -> str:
        names = sorted(set(self.available_cc) | set(self.loadable_cc))
        return ", ".join(names) if names else "none"


def _loadable_cc(release: str) -> tuple[str, ...]:
    base = Path("/lib/modules") / release / "kernel/net/ipv4"
    found = []
    try:
        for p in base.iterdir():
            name = p.name.split(".", 1)[0]
            if name.startswith("tcp_") and name not in ("tcp_diag",):
                found.append(name.removeprefix("tcp_"))
    except OSError:
        pass
    return tuple(sorted(found))


def probe() -> KernelInfo:
    """Look at this machine (cheap: a few /proc reads and one optional import)."""
    release = platform.release()
    enabled = _read("/proc/sys/net/mptcp/enabled")
    coupled_ok, coupled_reason = False, "the coupled congestion controls (bpf/) are not built in"
    module = kernel_cc_module()
    if module is not None:
        coupled_ok, coupled_reason = module.available()
    return KernelInfo(
        release=release,
        root=os.geteuid() == 0,
        tun=os.path.exists("/dev/net/tun"),
        netns=os.path.exists("/proc/self/ns/net") and shutil.which("ip") is not None,
        mptcp_enabled=None if enabled is None else enabled == "1",
        available_cc=tuple(
            (_read("/proc/sys/net/ipv4/tcp_available_congestion_control") or "").split()
        ),
        allowed_cc=tuple(
            (_read("/proc/sys/net/ipv4/tcp_allowed_congestion_control") or "").split()
        ),
        loadable_cc=_loadable_cc(release),
        schedulers=tuple((_read("/proc/sys/net/mptcp/available_schedulers") or "").split()),
        coupled_ok=coupled_ok,
        coupled_reason=coupled_reason,
        missing_tools=tuple(t for t in ("ip",) if shutil.which(t) is None),
    )


@dataclass(frozen=True)
class _Switch:
    """A simulator-model switch: the field, the kernel's behaviour, and how to read the flow."""

    field: str
    kernel_value: Any
    effective: Callable[[FlowSpec], Any]
    meaning: str
    mptcp_only: bool = False


def _explicit(flow: FlowSpec, dotted: str) -> bool:
    """Whether the scenario set ``dotted`` (e.g. ``tcp.rto_policy``) itself."""
    obj: Any = flow
    parts = dotted.split(".")
    for part in parts[:-1]:
        if part not in obj.model_fields_set:
            return False
        obj = getattr(obj, part)
    return parts[-1] in obj.model_fields_set


_SWITCHES = (
    _Switch(
        "penalization",
        "off",
        lambda f: f.penalization_mode(),
        "the kernel does not penalise slow subflows",
        mptcp_only=True,
    ),
    _Switch(
        "opportunistic_retransmit",
        False,
        lambda f: f.opportunistic_retransmit_enabled(),
        "the kernel has no opportunistic retransmission (only reinjection on timeout)",
        mptcp_only=True,
    ),
    _Switch(
        "join_delay_s",
        None,
        lambda f: f.join_delay_s,
        "the kernel's path manager opens additional subflows once the connection is fully "
        "established (its first data acknowledged), about one round trip of the first path "
        "after the handshake, which is the simulator's default",
        mptcp_only=True,
    ),
    _Switch(
        "tcp.rto_policy",
        "linux",
        lambda f: f.tcp.rto_policy,
        "the kernel computes its RTO the Linux way",
    ),
    _Switch(
        "tcp.abc_limit",
        2,
        lambda f: f.tcp.abc_limit,
        "the kernel's slow start grows by the segments each ACK covers",
    ),
    _Switch(
        "tcp.cwnd_limited_gate",
        True,
        lambda f: f.tcp.cwnd_limited_gate,
        "the kernel grows cwnd only while cwnd-limited",
    ),
    _Switch(
        "tcp.hystart",
        True,
        lambda f: f.tcp.hystart,
        "the kernel's CUBIC runs HyStart (tcp_cubic's hystart module parameter is global)",
    ),
    _Switch(
        "tcp.oretx_rtt_factor",
        4.0,
        lambda f: f.tcp.oretx_rtt_factor,
        "opportunistic retransmission does not exist in the kernel",
    ),
    _Switch(
        "tcp.oretx_small_cwnd",
        4,
        lambda f: f.tcp.oretx_small_cwnd,
        "opportunistic retransmission does not exist in the kernel",
    ),
)

#: Switches that only the coupled BPF congestion controls implement (spec §2.8), with the
#: value plain Linux Reno/CUBIC behave like.
_COUPLED_SWITCHES = (
    ("tcp.count_mode", "per_ack"),
    ("tcp.recovery_uses_ssthresh", True),
    ("tcp.min_ssthresh_segments", 2),
)


def _refuse(i: int, name: str, message: str) -> UserError:
    return UserError(message, field=f"flows[{i}].{name}")


def check(scenario: Scenario, info: KernelInfo) -> list[str]:
    """Refuse (UserError) what the kernel cannot run; return notes on simulator defaults the
    kernel does not model."""
    notes: list[str] = []
    if len(scenario.flows) > MAX_GROUPS:
        raise UserError(
            f"the emulator runs at most {MAX_GROUPS} flow entries (each has its own hosts in "
            f"the emulator's address plan), got {len(scenario.flows)}; a `count` runs several "
            "identical flows in one entry",
            field="flows",
        )
    if scenario.trace_interval_ms < MIN_EMULATED_TRACE_INTERVAL_MS:
        raise UserError(
            "the emulator samples its links and the kernel's sockets in real time, at most "
            f"every {MIN_EMULATED_TRACE_INTERVAL_MS:g} ms: expected at least that, got "
            f"{scenario.trace_interval_ms:g} ms; " + SIMULATOR_HINT,
            field="trace_interval_ms",
        )
    flows = 0
    for i, flow in enumerate(scenario.flows):
        mptcp = flow.protocol == "mptcp"
        flows += flow.count
        if flows > MAX_EMULATED_FLOWS:
            raise _refuse(
                i,
                "count",
                f"the emulator runs at most {MAX_EMULATED_FLOWS} flows in all (each is a socket "
                f"of one traffic program, polled in real time), got {flows} with this entry; "
                + SIMULATOR_HINT,
            )
        if mptcp and len(flow.paths) > MAX_EXTRA_SUBFLOWS + 1:
            raise _refuse(
                i,
                "paths",
                f"the kernel's path manager opens at most {MAX_EXTRA_SUBFLOWS} additional "
                f"subflows ({MAX_EXTRA_SUBFLOWS + 1} paths), got {len(flow.paths)}; "
                + SIMULATOR_HINT,
            )
        cc = flow.cc_kind()
        default = "" if flow.cc is not None else f" (the default for {flow.protocol})"
        if cc in COUPLED:
            if not info.coupled_ok:
                raise _refuse(
                    i,
                    "cc",
                    f"'{cc}'{default} needs the coupled congestion controls, which are not "
                    f"available: {info.coupled_reason}. This kernel offers "
                    f'{info.cc_offer()}: set cc = "cubic" or "reno" (uncoupled), ' + SIMULATOR_HINT,
                )
        elif not info.offers_cc(KERNEL_CC[cc]):
            raise _refuse(
                i,
                "cc",
                f"'{cc}'{default} is not available in this kernel, which offers "
                f"{info.cc_offer()}; " + SIMULATOR_HINT,
            )
        if mptcp and flow.scheduler != "linger":
            given = "" if "scheduler" in flow.model_fields_set else " (the default)"
            offered = ", ".join(info.schedulers) or "default"
            raise _refuse(
                i,
                "scheduler",
                f"'{flow.scheduler}'{given} is not a scheduler of this kernel, whose only "
                f"MPTCP scheduler is its default one (net.mptcp.available_schedulers = "
                f'{offered}), the linger-time scheduler: set scheduler = "linger", '
                + SIMULATOR_HINT,
            )
        for sw in _SWITCHES:
            if sw.mptcp_only and not mptcp:
                continue
            value = sw.effective(flow)
            if value == sw.kernel_value:
                continue
            if _explicit(flow, sw.field):
                raise _refuse(
                    i,
                    sw.field,
                    f"{value!r} cannot be emulated: {sw.meaning}; " + SIMULATOR_HINT,
                )
            if sw.mptcp_only:
                notes.append(
                    f"flows[{i}].{sw.field}: the simulator's default {value!r} is not "
                    f"modelled: {sw.meaning}"
                )
        if flow.tcp.sack and flow.tcp.loss_detection != "rack":
            # Noted, not refused: scenarios built by templates carry every default, so an
            # explicit "fack" cannot be told from the default here.
            notes.append(
                f"flows[{i}].tcp.loss_detection: {flow.tcp.loss_detection!r} is the simulator's; "
                "the kernel finds losses with RACK (RFC 8985; Linux dropped FACK in 4.15): set "
                '"rack" for the simulator to compare like with like'
            )
        if flow.tcp.cwnd_limited_gate and flow.tcp.cwnd_limited_check != "per_round":
            # Noted, not refused, as loss_detection above.
            notes.append(
                f"flows[{i}].tcp.cwnd_limited_check: {flow.tcp.cwnd_limited_check!r} is the "
                "simulator's; the kernel measures whether the window is used over a round of "
                'data (tcp_cwnd_validate, Linux 3.16 on): set "per_round" for the simulator to '
                "compare like with like"
            )
        if flow.tcp.sack and flow.tcp.loss_detection == "rack" and not flow.tcp.prr:
            # Noted, not refused, as loss_detection above.
            notes.append(
                f"flows[{i}].tcp.prr: false is the simulator's; the kernel reduces its window "
                "in fast recovery by Proportional Rate Reduction (RFC 6937, Linux 3.2 on): set "
                "true for the simulator to compare like with like"
            )
        if not flow.tcp.slow_start_after_idle:
            # The kernel does what the scenario says (netns.configure_client sets the sysctl):
            # noted because it departs from the kernel as shipped.
            notes.append(
                f"flows[{i}].tcp.slow_start_after_idle: false turns the kernel's restart of idle "
                "windows off for this run (net.ipv4.tcp_slow_start_after_idle, on in Linux by "
                "default): set true for the kernel as shipped"
            )
        if cc == "cubic" and flow.tcp.cubic_variant != "linux":
            # Noted, not refused, as loss_detection above.
            notes.append(
                f"flows[{i}].tcp.cubic_variant: {flow.tcp.cubic_variant!r} is the simulator's; "
                "the kernel's CUBIC grows its Reno-friendly window by 8/15 of a segment per RTT "
                "and by at least 5 % per RTT until a loss gives it a window maximum "
                '(tcp_cubic.c): set "linux" for the simulator to compare like with like'
            )
        if flow.rcvbuf_mode() == "auto" and flow.tcp.drs_variant != "linux":
            # Noted, not refused, as cubic_variant above.
            notes.append(
                f"flows[{i}].tcp.drs_variant: {flow.tcp.drs_variant!r} is the simulator's; "
                "the kernel (6.16 on) sizes an auto-tuned receive buffer from a receiver RTT "
                "that takes smaller samples at once, without 16 segments of slack: set "
                '"linux" for the simulator to compare like with like'
            )
        if cc not in COUPLED:
            for name, plain in _COUPLED_SWITCHES:
                value = _tcp_option(flow, name)
                if value is not None and value != plain and _explicit(flow, name):
                    raise _refuse(
                        i,
                        name,
                        f"{value!r} only applies to the coupled congestion controls "
                        f"(lia, olia, balia); the kernel's {cc} behaves as {plain!r}",
                    )
        floor = flow.tcp.min_ssthresh_segments
        fixed = _FIXED_SSTHRESH_FLOORS.get(cc)
        if fixed is not None and floor not in (None, fixed.segments):
            raise _refuse(
                i,
                "tcp.min_ssthresh_segments",
                f"{floor} cannot be emulated: the kernel's {cc.upper()} floors ssthresh at "
                f"{fixed.words} ({fixed.source}): leave it unset " + SIMULATOR_HINT,
            )
        for name in ("rcvbuf_bytes", "sndbuf_bytes", "rcvbuf_max_bytes", "sndbuf_max_bytes"):
            v = getattr(flow, name)
            if v is not None and v > 2**30:
                raise _refuse(i, name, f"at most 1 GiB in the kernel, got {v}")
        if flow.sndbuf_bytes is not None and flow.sndbuf_bytes < KERNEL_MIN_SNDBUF_BYTES:
            raise _refuse(
                i,
                "sndbuf_bytes",
                f"at least {KERNEL_MIN_SNDBUF_BYTES} bytes in the kernel (SOCK_MIN_SNDBUF), "
                f"got {flow.sndbuf_bytes}; " + SIMULATOR_HINT,
            )
    _coupled_options(scenario)  # refuses conflicting options early
    return notes


class _FixedFloor(NamedTuple):
    segments: int
    words: str
    source: str


#: The ssthresh floor a kernel program applies whatever the scenario asks (OLIA's registration
#: takes one or two segments; see _coupled_options).
_FIXED_SSTHRESH_FLOORS = {
    "balia": _FixedFloor(1, "one segment", "as Linux mptcp_balia.c"),
    "lia": _FixedFloor(2, "two segments", "Reno's ssthresh, as Linux mptcp_coupled.c"),
}


def _tcp_option(flow: FlowSpec, dotted: str) -> Any:
    return getattr(flow.tcp, dotted.split(".", 1)[1])


def _coupled_options(scenario: Scenario) -> dict[str, Any] | None:
    """The one set of BPF congestion-control options a run's coupled flows agree on, as keyword
    arguments of ``kernel_cc.CCOptions``: the counting and recovery options serve every coupled
    registration of the run alike, OLIA's ssthresh floor only OLIA's (LIA and BALIA keep their
    own, ``_FIXED_SSTHRESH_FLOORS``)."""
    chosen: dict[str, Any] | None = None
    olia_floor: int | None = None
    for i, flow in enumerate(scenario.flows):
        if flow.cc_kind() not in COUPLED:
            continue
        opts = {
            "count_per_segment": flow.tcp.count_mode == "per_segment",
            "ssthresh_in_recovery": flow.tcp.recovery_uses_ssthresh,
        }
        if chosen is None:
            chosen = opts
        elif opts != chosen:
            raise _refuse(
                i,
                "tcp",
                "count_mode and recovery_uses_ssthresh must be the same for every coupled flow "
                "of a run (the kernel registrations take them from one setting)",
            )
        if flow.cc_kind() != "olia":
            continue
        # Unset: Linux OLIA's floor of 2.
        floor = flow.tcp.min_ssthresh_segments or 2
        if floor not in (1, 2):
            raise _refuse(
                i,
                "tcp.min_ssthresh_segments",
                f"the kernel implementation takes 1 or 2, got {floor}",
            )
        if olia_floor is None:
            olia_floor = floor
        elif floor != olia_floor:
            raise _refuse(
                i,
                "tcp.min_ssthresh_segments",
                f"must be the same for every OLIA flow of a run (one kernel registration serves "
                f"them all); an earlier OLIA flow has {olia_floor}, this one {floor}",
            )
    if chosen is None:
        return None
    return {**chosen, "olia_min_ssthresh": olia_floor or 2}


def _coupled_names(scenario: Scenario) -> list[str]:
    return sorted({KERNEL_CC[f.cc_kind()] for f in scenario.flows if f.cc_kind() in COUPLED})


def uses_coupled(scenario: Scenario) -> bool:
    """Whether the scenario needs a coupled congestion control registered in the kernel."""
    return bool(_coupled_names(scenario))


def load_coupled(
    scenario: Scenario,
    run_id: str,
    waiting: Callable[[list[str]], object] | None = None,
) -> dict[str, Any] | None:
    """Register the coupled congestion controls the scenario uses; returns what the report
    records (implementation, object hash, options, kernel release), or None if none is used.

    The run ``run_id`` holds the registrations it uses. Where a live run holds one of them
    with other options, this waits for it to end (calling ``waiting(run_ids)`` every half
    second): replaced under that run, the registration would give its later sockets this
    run's options without a word."""
    from mptcplab.backends.emu import rundir

    names = _coupled_names(scenario)
    if not names:
        return None
    module = kernel_cc_module()
    if module is None:  # check() refused already; kept for type narrowing
        raise UserError("the coupled congestion controls are not part of this build")
    opts = _coupled_options(scenario) or {}
    while True:
        try:
            info = module.ensure_loaded(
                names,
                options=module.CCOptions(**opts),
                holder=run_id,
                holder_alive=rundir.is_alive,
            )
            break
        except module.RegistrationBusy as busy:
            if waiting is not None:
                waiting(busy.holders)
            time.sleep(_BUSY_POLL_S)
        except module.KernelCCError as exc:
            raise UserError(f"cannot load {', '.join(names)}: {exc}") from None
    return {"kernel_release": platform.release(), "congestion_controls": info}


def unload_coupled_if_idle() -> None:
    """After a run that used coupled congestion controls: unregister them unless another
    emulator run is alive (one registration serves every run), so a finished run leaves no
    registration behind. Sockets still closing keep theirs until they are freed.

    The question is asked under the loader's lock, and a run is alive (its run directory
    locked) before it loads: a run starting meanwhile either is seen alive or loads after the
    unload, never before it."""
    from mptcplab.backends.emu import rundir
    from mptcplab.backends.emu.netns import EmulatorError

    module = kernel_cc_module()
    if module is None:
        return

    try:
        module.unload_all(unless=lambda: bool(rundir.live_run_ids()))
    except module.KernelCCError as exc:
        raise EmulatorError(f"cannot unregister the coupled congestion controls: {exc}") from None
