"""``mptcplab emu`` on input the kernel cannot run: one line, exit code 2 (no root needed)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

# The `run_cli` fixture of tests/conftest.py.
CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def test_a_scheduler_the_kernel_lacks_is_one_line_and_exit_2(
    tmp_path: Path, run_cli: CliRunner
) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "duration_s": 1,
                "links": [{"id": "a", "capacity_mbps": 8, "delay_ms": 10}],
                "flows": [
                    {
                        "id": "f",
                        "protocol": "mptcp",
                        "cc": "cubic",
                        "scheduler": "roundrobin",
                        "paths": [["a"]],
                    }
                ],
            }
        )
    )
    out = run_cli("emu", str(path))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "flows[0].scheduler" in lines[0] and "mptcplab sim" in lines[0]


def test_a_malformed_scenario_names_the_file_and_field(tmp_path: Path, run_cli: CliRunner) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'duration_s = 1.0\n[[links]]\nid = "a"\ncapcity_mbps = 8.0\ndelay_ms = 1.0\n'
        '[[flows]]\nid = "f"\nprotocol = "tcp"\npaths = [["a"]]\n'
    )
    out = run_cli("emu", str(path))
    assert out.returncode == 2
    assert str(path) in out.stderr and "capcity_mbps" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_a_duration_that_is_not_positive_is_refused_as_sim_refuses_it(
    value: str, run_cli: CliRunner
) -> None:
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "default.toml"
    for command in ("emu", "sim"):
        out = run_cli(command, str(scenario), "--duration", value)
        assert out.returncode == 2, (command, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1
        assert lines[0].startswith("error: --duration: expected a duration in seconds > 0"), lines


@pytest.mark.root
@pytest.mark.usefixtures("emulator")
def test_doctor_says_the_emulator_can_run_on_a_capable_machine(run_cli: CliRunner) -> None:
    out = run_cli("doctor")
    assert out.returncode == 0, out.stdout
    for check in ("root", "TUN devices", "network namespaces", "MPTCP", "linkem"):
        assert check in out.stdout


@pytest.mark.root
@pytest.mark.usefixtures("emulator")
def test_the_emulator_runs_the_fields_set_on_its_command_line(run_cli: CliRunner) -> None:
    default = Path(__file__).resolve().parents[2] / "scenarios" / "default.toml"
    out = run_cli(
        "emu",
        str(default),
        "--json",
        "--set",
        "duration_s=2",
        "--set",
        "links[wifi].capacity_mbps=2",
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["scenario"]["duration_s"] == 2
    assert report["scenario"]["links"][0]["capacity_mbps"] == 2
    # Oracle: the set rate bounds the flow (the file says 8 Mbit/s, which would not).
    assert 0 < report["flows"][0]["goodput_mbps"] <= 2
