"""Backends a campaign can run on: name -> pure callable ``(scenario_dict) -> report_dict``.

A backend is named by import references ("module:function") rather than by the function object,
so a worker process — local or on a Ray node — imports exactly the code the campaign names and
needs no state from the process that planned the runs. Each backend also names a function giving
its version, which enters every run key: a new simulator version re-runs the campaign.

``sim`` runs the packet-level simulator in-process; ``emu`` runs the real Linux kernel in
emulated networks (root, network namespaces, TUN). ``serial`` backends (the emulator, whose
runs share the CPU that forwards their packets) run one at a time under the local executor
unless the user asks for more jobs.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Scenario = dict[str, Any]
Report = dict[str, Any]


@dataclass(frozen=True)
class Backend:
    name: str
    run: str  # "module:function", (scenario dict) -> report dict
    version: str  # "module:function", () -> version string
    serial: bool = False
    # "module:function", (scenario dict) -> None: raises UserError for a scenario the backend
    # cannot run, so that a campaign is refused before its first run rather than run by run.
    check: str | None = None

    def version_string(self) -> str:
        return str(import_ref(self.version)())


def import_ref(ref: str) -> Callable[..., Any]:
    module_name, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module_name), attr)  # type: ignore[no-any-return]


def run_sim(scenario: Scenario) -> Report:
    """The simulator backend: run the scenario, return the report as plain data."""
    from mptcplab import sim

    return sim.run(scenario).to_dict()


def sim_version() -> str:
    from mptcplab import sim
    from mptcplab.results import FORMAT_VERSION

    return f"mpsim {sim.version()} (report format {FORMAT_VERSION})"


class BackendUnavailable(Exception):
    """The backend cannot run on this machine (the message says why)."""


def emu_version() -> str:
    """The kernel is the emulator's engine: its release enters every run key."""
    import platform

    from mptcplab import __version__, emu

    ok, why = emu.available()
    if not ok:
        raise BackendUnavailable(why)
    return f"linux {platform.release()} (mptcplab emu {__version__})"


@functools.cache
def _kernel() -> Any:
    from mptcplab.backends.emu import kernel

    return kernel.probe()


def check_emu(scenario: Scenario) -> None:
    """Refuse what this kernel cannot run (a scheduler or congestion control it lacks)."""
    from mptcplab.backends.emu import kernel
    from mptcplab.scenario.model import Scenario as ScenarioModel

    kernel.check(ScenarioModel.model_validate(scenario), _kernel())


BACKENDS: dict[str, Backend] = {
    "sim": Backend(
        "sim", "mptcplab.campaign.backends:run_sim", "mptcplab.campaign.backends:sim_version"
    ),
    # One emulated network at a time unless --jobs says otherwise: runs share the CPU that
    # forwards their packets.
    "emu": Backend(
        "emu",
        "mptcplab.emu:run",
        "mptcplab.campaign.backends:emu_version",
        serial=True,
        check="mptcplab.campaign.backends:check_emu",
    ),
}


def register(backend: Backend) -> None:
    """Add or replace a backend (the emulator registers itself; tests register stand-ins)."""
    BACKENDS[backend.name] = backend
