"""The linkem process of a run: its configuration, status snapshots and final counters."""

from __future__ import annotations

import json
import os
import signal
from typing import Any

from mptcplab.backends.emu.addressing import Plan
from mptcplab.backends.emu.netns import EmulatorError
from mptcplab.backends.emu.programs import Program, read_json, require_binary, wait_for_file
from mptcplab.backends.emu.rundir import RunDir
from mptcplab.scenario.model import Scenario

#: linkem's release-timing busy-wait before each release, µs (see crates/linkem emulator.rs);
#: MPTCPLAB_LINKEM_SPIN_US overrides it for experiments.
SPIN_US = int(os.environ.get("MPTCPLAB_LINKEM_SPIN_US", "15"))
#: SCHED_FIFO priority of linkem, so that other load on the machine cannot delay releases;
#: MPTCPLAB_LINKEM_RT_PRIORITY=0 turns it off.
REALTIME_PRIORITY = int(os.environ.get("MPTCPLAB_LINKEM_RT_PRIORITY", "20"))


def config(scenario: Scenario, plan: Plan, rundir: RunDir) -> dict[str, Any]:
    return {
        "links": [link.model_dump(mode="json", exclude_none=True) for link in scenario.links],
        "seed": scenario.seed,
        "interfaces": [
            {
                "netns": f"/run/netns/{iface.namespace}",
                "name": iface.name,
                "addresses": [iface.address],
            }
            for iface in plan.interfaces()
        ],
        "routes": plan.linkem_routes(),
        "status_path": str(rundir.path / "linkem-status.json"),
        "trace_interval_ms": scenario.trace_interval_ms,
        "spin_us": SPIN_US,
        "realtime_priority": REALTIME_PRIORITY or None,
    }


class Linkem:
    def __init__(self, scenario: Scenario, plan: Plan, rundir: RunDir) -> None:
        self.cfg = config(scenario, plan, rundir)
        self.cfg_path = rundir.path / "linkem.json"
        self.cfg_path.write_text(json.dumps(self.cfg))
        self.status_path = rundir.path / "linkem-status.json"
        self.seq = 0
        self.program = Program(
            rundir, "linkem", [str(require_binary("linkem")), "--config", str(self.cfg_path)]
        )

    def wait_ready(self, timeout_s: float = 10.0) -> None:
        self.program.wait_ready(timeout_s)

    def snapshot(self, timeout_s: float = 2.0) -> dict[str, Any]:
        """Ask for a status snapshot (SIGUSR1) and return it."""
        want = self.seq + 1
        self.program.signal(signal.SIGUSR1)
        data = wait_for_file(self.status_path, lambda d: d.get("seq", 0) >= want, timeout_s)
        self.seq = data["seq"]
        return data

    def stop(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """Stop linkem and return its final status."""
        self.program.stop(timeout_s)
        data = read_json(self.status_path)
        if not data.get("final_snapshot"):
            said = self.program.stderr_tail().strip()
            raise EmulatorError(
                "linkem stopped without its final status"
                + (f": {said}" if said else f" and said nothing (within {timeout_s:g} s)")
            )
        return data
