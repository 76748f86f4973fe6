"""The scenario shared by every backend: the model (mirror of mpsim's serde types), loading from
TOML/JSON with located errors, and templates of published scenarios.

    from mptcplab.scenario import load_scenario, templates
    s = load_scenario("scenarios/default.toml")
    s = templates.make("two_path", capacity_mbps=(10, 5), rtt_ms=(20, 80))
    s = ScenarioFile("scenarios/default.toml").with_fields({"links[wifi].loss": 0.01})
"""

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
