"""One emulator run, from scenario to report, with teardown in every case.

Order: check the scenario against the kernel (refusals happen before anything is created) →
run directory and lock → namespaces → linkem (creates the TUN devices inside them) →
addresses, routes, MPTCP endpoints, sysctls → traffic servers, then clients → ``go`` at time
zero → snapshots of linkem at the end of the warm-up and at the end → results → teardown:
processes, namespaces, run directory. Teardown runs in ``finally``, so also on errors, Ctrl-C
and SIGTERM; after a SIGKILL ``mptcplab clean`` (:mod:`.cleanup`) removes what is left.
"""

from __future__ import annotations

import contextlib
import platform
import shutil
import time
from collections.abc import Callable
from typing import Any

from mptcplab.backends.emu import addressing, kernel, netns
from mptcplab.backends.emu import report as report_mod
from mptcplab.backends.emu.linkem import Linkem
from mptcplab.backends.emu.netns import EmulatorError
from mptcplab.backends.emu.programs import Program, read_json, require_binary
from mptcplab.backends.emu.rundir import RunDir
from mptcplab.backends.emu.traffic import start_client, start_server
from mptcplab.errors import UserError
from mptcplab.scenario.model import DEFAULT_BUFFER_CAP_BYTES, Scenario
from mptcplab.sim import copy_start_ns
from mptcplab.stopping import signals_held, termination_as_interrupt

#: Time between the ``go`` message and time zero, so every process is waiting when it comes.
START_MARGIN_S = 0.3
#: Extra time the traffic programs get after the scenario's end to write their results.
FINISH_GRACE_S = 15.0


def preflight(info: kernel.KernelInfo) -> None:
    """Refuse to start where the emulator cannot run at all."""
    missing = []
    if not info.root:
        missing.append("root privileges")
    if not info.tun:
        missing.append("/dev/net/tun")
    if not info.netns:
        missing.append("network namespaces (iproute2 `ip`)")
    # net.mptcp.enabled is per namespace, and each run's namespaces set it: off here, in the
    # caller's own namespace, it is no obstacle.
    if info.mptcp_enabled is None:
        missing.append("a kernel with MPTCP")
    if shutil.which("sysctl") is None:
        missing.append("sysctl (procps)")
    if missing:
        raise EmulatorError(
            "the emulator cannot run here: it needs "
            + ", ".join(missing)
            + " (see mptcplab doctor)"
        )
    require_binary("linkem")
    require_binary("mptcp-traffic")


Progress = Callable[[str, float, float], object]
"""Called as ``progress(stage, traffic_s, duration_s)``: the stage (``"setting up"``,
``"traffic"``, ``"collecting"``), the seconds of traffic so far and the scenario's duration."""


def _sleep_until(monotonic_ns: int, tick: Callable[[], object] | None = None) -> None:
    while True:
        left = (monotonic_ns - time.monotonic_ns()) / 1e9
        if left <= 0:
            return
        time.sleep(min(left, 0.5))
        if tick is not None:
            tick()


class Run:
    """The resources of one run, released by :meth:`teardown` whatever happened."""

    def __init__(self, scenario: Scenario, progress: Progress | None = None) -> None:
        self.scenario = scenario
        self.progress = progress
        self.rundir = RunDir.create()
        try:
            self.plan = addressing.plan(scenario, self.rundir.run_id)
        except BaseException:
            # The locked directory would make every later run of this process see a live run.
            self.rundir.remove()
            raise
        self.namespaces: list[str] = []
        self.linkem: Linkem | None = None
        self.programs: list[Program] = []

    def build(self) -> None:
        for ns in self.plan.namespaces:
            netns.add(ns)
            self.namespaces.append(ns)
        self.linkem = Linkem(self.scenario, self.plan, self.rundir)
        self.linkem.wait_ready()
        for g in self.plan.groups:
            flow = g.flow
            netns.configure_client(g, sndbuf_cap=flow.sndbuf_max_bytes or DEFAULT_BUFFER_CAP_BYTES)
            netns.configure_server(
                g,
                rcvbuf_cap=flow.rcvbuf_max_bytes or DEFAULT_BUFFER_CAP_BYTES,
                autotune=flow.rcvbuf_mode() == "auto",
            )

    def report_stage(self, stage: str, traffic_s: float) -> None:
        """Tell the progress callback, if there is one, where the run is."""
        if self.progress is not None:
            self.progress(stage, traffic_s, self.scenario.duration_s)

    def traffic(self) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]], dict, dict]:
        assert self.linkem is not None
        sc = self.scenario
        servers = self._start_each(start_server)
        for s in servers:
            s.wait_ready(10.0)
        # Computed once: each group's copies start when the simulator starts them.
        starts = copy_start_ns(sc)
        clients = self._start_each(lambda s, g, r: start_client(s, g, r, starts[g.index]))
        for c in clients:
            c.wait_ready(10.0)
        t0 = time.monotonic_ns() + int(START_MARGIN_S * 1e9)
        for p in servers + clients:
            p.send(f"go {t0}")

        def tick() -> None:
            elapsed_s = (time.monotonic_ns() - t0) / 1e9
            self.report_stage("traffic", min(max(0.0, elapsed_s), sc.duration_s))

        _sleep_until(t0 + int(sc.warmup_s * 1e9), tick)
        at_warmup = self.linkem.snapshot()
        _sleep_until(t0 + int(sc.duration_s * 1e9), tick)
        at_end = self.linkem.snapshot()
        self.report_stage("collecting", sc.duration_s)
        for p in servers + clients:
            status = p.wait(FINISH_GRACE_S)
            if status != 0:
                raise p.failure(status)
        server_out = [
            read_json(self.rundir.path / f"server-{g.index}.json") for g in self.plan.groups
        ]
        client_out = [
            read_json(self.rundir.path / f"client-{g.index}.json") for g in self.plan.groups
        ]
        return t0, server_out, client_out, at_warmup, at_end

    def _start_each(
        self, start: Callable[[Scenario, addressing.Group, RunDir], Program]
    ) -> list[Program]:
        """One program per group, each recorded for the teardown as soon as it exists: an
        interrupt while the next one starts must not leave the earlier ones running."""
        started = []
        for g in self.plan.groups:
            started.append(start(self.scenario, g, self.rundir))
            self.programs.append(started[-1])
        return started

    def tun_drops(self) -> dict[str, int]:
        return {
            f"{i.namespace}/{i.name}": netns.tun_drops(i.namespace, i.name)
            for i in self.plan.interfaces()
        }

    def teardown(self) -> None:
        # A second Ctrl-C or SIGTERM waits until everything is taken down.
        with signals_held():
            self._take_down()

    def _take_down(self) -> None:
        for p in self.programs:
            with contextlib.suppress(Exception):
                p.stop(2.0)
        if self.linkem is not None:
            with contextlib.suppress(Exception):
                self.linkem.program.stop(2.0)
        # Every namespace of the plan that exists: one made just before an interrupt may not
        # have been recorded yet.
        netns.delete_all(self.plan.namespaces)
        self.rundir.remove()


def _refuse_mismatches(what: str, flows: list[str], why: str = "") -> None:
    """Fail the run when the kernel set some flows up otherwise than asked, naming three."""
    if flows:
        more = f" (and {len(flows) - 3} more flows)" if len(flows) > 3 else ""
        raise EmulatorError(f"{what}: " + "; ".join(flows[:3]) + more + why)


def run_scenario(
    scenario: Scenario, *, version: str, progress: Progress | None = None
) -> dict[str, Any]:
    """Run ``scenario`` on the kernel; return the report as plain data. ``progress``, when
    given, hears of each stage and, during the traffic, of its time every half second."""
    info = kernel.probe()
    notes = kernel.check(scenario, info)  # bad input is refused before anything else
    preflight(info)
    uses_coupled = kernel.uses_coupled(scenario)
    with termination_as_interrupt():
        # The run is alive (its directory locked) before it registers a coupled controller,
        # so that another run ending now does not unregister it (unload_coupled_if_idle).
        run = Run(scenario, progress)
        try:
            coupled = kernel.load_coupled(
                scenario,
                run.rundir.run_id,
                lambda runs: run.report_stage(f"waiting for run {', '.join(runs)}", 0.0),
            )
            started = time.monotonic()
            run.report_stage("setting up", 0.0)
            run.build()
            setup_s = time.monotonic() - started
            t0, servers, clients, at_warmup, at_end = run.traffic()
            _refuse_mismatches(
                "the kernel ran another congestion control than the scenario's",
                report_mod.congestion_mismatches(run.plan.groups, clients),
                " (an MPTCP socket takes any name and its subflows fall back to the default"
                " when that name is not registered)",
            )
            _refuse_mismatches(
                "the kernel gave a send buffer of another size than the scenario's",
                report_mod.sndbuf_mismatches(run.plan.groups, clients),
            )
            assert run.linkem is not None
            drops = run.tun_drops()
            final = run.linkem.stop()
            data = report_mod.RunData(
                scenario=scenario,
                plan=run.plan,
                t0_ns=t0,
                servers=servers,
                clients=clients,
                linkem_warmup=at_warmup,
                linkem_end=at_end,
                linkem_final=final,
                tun_drops=drops,
                wall_s=time.monotonic() - started,
                setup_s=setup_s,
                kernel_release=platform.release(),
                notes=notes,
                coupled=coupled,
            )
            return report_mod.build(data, run_id=run.rundir.run_id, version=version)
        except EmulatorError as exc:
            raise EmulatorError(f"run {run.rundir.run_id}: {exc}") from None
        finally:
            with signals_held():
                run.teardown()
                if uses_coupled:
                    kernel.unload_coupled_if_idle()


__all__ = ["EmulatorError", "Progress", "UserError", "preflight", "run_scenario"]
