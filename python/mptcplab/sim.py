"""Run a scenario on mpsim, the deterministic packet-level simulator.

    from mptcplab import sim
    report = sim.run("scenarios/default.toml")      # or a Scenario, or a dict
    report.flow("laptop").goodput_mbps

The scenario is checked by the Python model first (errors name the file, line and field), then by
the simulator itself; a simulator rejection is re-raised as :class:`UserError` with its field.
Nothing here draws random numbers: the same scenario and seed give the same report, bit for bit
(``wall_s`` aside).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from mptcplab.errors import UserError
from mptcplab.results import Report
from mptcplab.scenario.load import (
    field_line,
    parse_document,
    recheck,
    resolve_scenario,
    scenario_from_data,
    with_overrides,
)
from mptcplab.scenario.model import Scenario

__all__ = [
    "Progress",
    "SimulatorUnavailable",
    "available",
    "run",
    "run_json",
    "validate",
    "version",
]


class SimulatorUnavailable(RuntimeError):
    """The native extension ``mptcplab._mpsim`` is not built."""


def _native() -> ModuleType:
    try:
        from mptcplab import _mpsim  # type: ignore[attr-defined]
    except ImportError as exc:
        raise SimulatorUnavailable(
            f"the simulator extension mptcplab._mpsim is not built ({exc}); run `make build`"
        ) from None
    return _mpsim


def available() -> bool:
    """Whether the native simulator can be imported."""
    try:
        _native()
    except SimulatorUnavailable:
        return False
    return True


def version() -> str:
    """Version of the mpsim crate the extension was built from, with its source fingerprint."""
    return str(_native().__version__)


def _rust_error(
    exc: Exception, *, model: Scenario, file: str | None, text: str | None, syntax: str
) -> UserError:
    field = str(getattr(exc, "field", "") or "")
    detail = str(getattr(exc, "detail", "") or exc)
    if not field and (named := recheck(model)) is not None:
        # The simulator's reader names no field for a value of the wrong type, which only a
        # model changed by assignment after its validation can hold: the model names it.
        return named
    if not field:
        # serde's position refers to the JSON generated here, not to the user's file.
        detail = re.sub(r" at line \d+ column \d+$", "", detail)
    line = field_line(field, text, syntax) if field else None
    return UserError(detail, file=file, line=line, field=field or None)


Progress = Callable[[float, float, int], object]
"""Called as ``progress(simulated_s, duration_s, events)`` during a run."""


def _simulate(
    scenario: Scenario,
    *,
    file: str | None = None,
    text: str | None = None,
    syntax: str = "json",
    progress: Progress | None = None,
) -> dict[str, Any]:
    native = _native()
    try:
        out = native.run(scenario.to_json(), progress)
    except native.ScenarioError as exc:
        raise _rust_error(exc, model=scenario, file=file, text=text, syntax=syntax) from None
    return json.loads(out)


def run(
    scenario: Scenario | dict[str, Any] | str | os.PathLike[str],
    *,
    seed: int | None = None,
    duration_s: float | None = None,
    trace: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> Report:
    """Simulate ``scenario``: a :class:`Scenario`, plain data, or the path of a ``.toml`` or
    ``.json`` file (a string is a path; JSON text goes to :func:`run_json`).

    ``seed``, ``duration_s`` and ``trace`` replace the scenario's values when given.
    ``progress``, when given, is called as ``progress(simulated_s, duration_s, events)`` at
    most ten times a wall-clock second and once at the end (from the thread running the
    simulation); an exception it raises stops the run. It does not change the report.
    """
    if progress is not None and not callable(progress):
        # Found before the run, not when it first reports (or at its end).
        raise TypeError(f"progress: expected a callable, got {type(progress).__name__}")
    model, file, text, syntax = resolve_scenario(scenario)
    model = with_overrides(model, seed=seed, duration_s=duration_s, trace=trace)
    return Report.from_dict(
        _simulate(model, file=file, text=text, syntax=syntax, progress=progress)
    )


def copy_start_ns(scenario: Scenario) -> list[list[int]]:
    """When each copy of each flow entry starts, in nanoseconds from time zero, by entry and
    copy: the entry's ``start_s``, and for the copies of an entry with ``count > 1`` the
    seeded offsets within 100 ms the simulator gives them so that identical users do not move
    in lock-step. The emulator starts its copies at these times too."""
    return [list(starts) for starts in _native().copy_starts(scenario.to_json())]


def validate(scenario: Scenario | dict[str, Any] | str | os.PathLike[str]) -> Scenario:
    """Check a scenario with the Python model and with the simulator itself, without running
    it; return the model. Problems raise :class:`UserError`."""
    model, file, text, syntax = resolve_scenario(scenario)
    native = _native()
    try:
        native.validate(model.to_json())
    except native.ScenarioError as exc:
        raise _rust_error(exc, model=model, file=file, text=text, syntax=syntax) from None
    return model


def run_json(text: str) -> dict[str, Any]:
    """Simulate a scenario given as JSON text; return the report as plain data (with
    ``wall_s``)."""
    data = parse_document(text, syntax="json")
    model = scenario_from_data(data, text=text, syntax="json")
    return _simulate(model, text=text, syntax="json")
