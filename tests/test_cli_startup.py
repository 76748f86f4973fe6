"""Every command line pays for what ``mptcplab.cli`` imports before it parses its arguments:
pandas, scipy and matplotlib took 0.7 s of the 1.3 s that import cost when the commands
imported them at the top, numpy 0.1-0.2 s of what was left. Commands that need them import
them when they run. The pydantic models of a scenario and of a report took another 0.15 s
(of 0.88 s for ``mptcplab metrics``): only the commands that read a scenario or a report build
them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "scipy", "matplotlib", "numpy")
MODELS = ("mptcplab.scenario.model", "mptcplab.results")


def _loaded_by_the_command_line(modules: tuple[str, ...], also: str = "mptcplab.cli") -> list[str]:
    """Which of ``modules`` a fresh interpreter holds once it has imported the command line and
    ``also``."""
    probe = (
        f"import sys, mptcplab.entry, mptcplab.cli, {also}\n"
        f"print(' '.join(m for m in {modules!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return out.split()


def test_the_command_line_starts_without_the_analysis_libraries() -> None:
    assert _loaded_by_the_command_line(HEAVY) == []


def test_the_command_line_starts_without_the_scenario_and_report_models() -> None:
    assert _loaded_by_the_command_line(MODELS) == []


def test_perf_records_are_read_without_pandas() -> None:
    # `perf matrix` refused a bad records file after 1.4-2.3 s, 0.6-1.5 s of it pandas, imported
    # through the perf client's block-latency summary.
    assert _loaded_by_the_command_line(("pandas",), also="mptcplab.backends.perf.gain") == []


def test_the_scenario_package_still_gives_every_name_it_lists() -> None:
    import mptcplab.scenario as scenario

    for name in scenario.__all__:
        assert getattr(scenario, name) is not None, name
        assert name in dir(scenario)
    from mptcplab.scenario import Scenario, load_scenario, templates
    from mptcplab.scenario.model import Scenario as ModelScenario

    assert Scenario is ModelScenario
    assert callable(load_scenario) and callable(templates.make)
    try:
        scenario.NoSuchName  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchName" in str(exc)
    else:
        raise AssertionError("an unknown name was given")
