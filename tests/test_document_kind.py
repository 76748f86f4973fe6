"""A scenario file given where a campaign is expected, or a campaign where a scenario is: one
line that says which kind of file it is and the command that runs it, not one "unknown key"
error per top-level key."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mptcplab.errors import UserError
from mptcplab.scenario import load_scenario

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "scenarios" / "default.toml"
CAMPAIGN = REPO / "campaigns" / "quickstart.toml"

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def _one_error_line(out: subprocess.CompletedProcess[str], expected: str) -> str:
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, out.stderr
    assert len(lines) == 1, out.stderr
    assert expected in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["run", "status", "report", "design", "export"])
def test_a_scenario_given_to_a_campaign_command_is_named_as_one(
    run_cli: CliRunner, command: str
) -> None:
    extra = ["--csv", "-"] if command == "export" else []
    line = _one_error_line(
        run_cli(command, str(SCENARIO), *extra), "this is a scenario file, not a campaign"
    )
    assert line.startswith(f"error: {SCENARIO}: ")
    assert "[[links]] and [[flows]]" in line
    assert f"mptcplab sim {SCENARIO}" in line


def test_a_campaign_given_to_sim_is_named_as_one(run_cli: CliRunner) -> None:
    line = _one_error_line(run_cli("sim", str(CAMPAIGN)), "this is a campaign file, not a scenario")
    assert line.startswith(f"error: {CAMPAIGN}: ")
    assert f"mptcplab run {CAMPAIGN}" in line


def test_loading_a_campaign_as_a_scenario_names_its_keys() -> None:
    with pytest.raises(UserError) as err:
        load_scenario(CAMPAIGN)
    assert "it has [scenario], [design], [factors], replications and backend, but no" in str(
        err.value
    )


def test_a_file_with_both_kinds_of_keys_gets_the_field_errors(tmp_path: Path) -> None:
    # Neither kind for sure: the usual per-key errors say what is wrong.
    mixed = tmp_path / "mixed.toml"
    mixed.write_text(SCENARIO.read_text() + "\nreplications = 3\n")
    with pytest.raises(UserError) as err:
        load_scenario(mixed)
    assert "replications" in str(err.value) and "campaign file" not in str(err.value)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sim", "expected a .toml or .json file, got a directory"),
        ("run", "expected a campaign file (.toml), got a directory"),
    ],
)
def test_a_directory_is_called_one(
    run_cli: CliRunner, tmp_path: Path, command: str, expected: str
) -> None:
    folder = tmp_path / "looks.toml"
    folder.mkdir()
    line = _one_error_line(run_cli(command, str(folder)), expected)
    assert line.startswith(f"error: {folder}: ")
