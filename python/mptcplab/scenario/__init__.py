"""The scenario shared by every backend: the model (mirror of mpsim's serde types), loading from
TOML/JSON with located errors, and templates of published scenarios.

    from mptcplab.scenario import load_scenario, templates
    s = load_scenario("scenarios/default.toml")
    s = templates.make("two_path", capacity_mbps=(10, 5), rtt_ms=(20, 80))
    s = ScenarioFile("scenarios/default.toml").with_fields({"links[wifi].loss": 0.01})

The names are imported on first use (PEP 562): the model needs pydantic, about a quarter of a
second to import, which commands that never read a scenario (``--help``, ``design``, ``perf``)
should not pay for the vocabulary module they share with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mptcplab.scenario import templates
    from mptcplab.scenario.field_paths import ScenarioFile
    from mptcplab.scenario.load import load_scenario, scenario_from_data
    from mptcplab.scenario.model import (
        BlocksApp,
        BulkApp,
        DropTailQueue,
        FlowSpec,
        Issue,
        LinkSpec,
        RedQueue,
        Scenario,
        SizeApp,
        TcpOptions,
        issues,
    )

# Each public name and the module that defines it.
_HOME = {
    "BlocksApp": "model",
    "BulkApp": "model",
    "DropTailQueue": "model",
    "FlowSpec": "model",
    "Issue": "model",
    "LinkSpec": "model",
    "RedQueue": "model",
    "Scenario": "model",
    "SizeApp": "model",
    "TcpOptions": "model",
    "issues": "model",
    "ScenarioFile": "field_paths",
    "load_scenario": "load",
    "scenario_from_data": "load",
}

__all__ = [
    "BlocksApp",
    "BulkApp",
    "DropTailQueue",
    "FlowSpec",
    "Issue",
    "LinkSpec",
    "RedQueue",
    "Scenario",
    "ScenarioFile",
    "SizeApp",
    "TcpOptions",
    "issues",
    "load_scenario",
    "scenario_from_data",
    "templates",
]


def __getattr__(name: str) -> Any:
    if name == "templates":
        return importlib.import_module(f"{__name__}.templates")
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
