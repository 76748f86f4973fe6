"""``mptcplab sim FILE --set PATH=VALUE`` (and ``emu``): a field of the scenario changed for one
run, with the paths a campaign over a scenario file takes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mptcplab import sim

ROOT = Path(__file__).resolve().parents[2]
LOSSY = ROOT / "scenarios" / "lossy_paths.toml"
CliRunner = Callable[..., subprocess.CompletedProcess[str]]

pytestmark = pytest.mark.skipif(not sim.available(), reason="simulator extension not built")


def _report(out: subprocess.CompletedProcess[str]) -> dict:
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    report.pop("wall_s")
    return report


def test_set_fields_run_what_the_edited_file_runs(tmp_path: Path, run_cli: CliRunner) -> None:
    # Oracle: the same changes written into a copy of the file by hand.
    text = LOSSY.read_text()
    edited = text.replace("loss = 0.01\n", "loss = 0.05\n").replace('cc = "lia"', 'cc = "olia"')
    assert edited.count("0.05") == 1 and "olia" in edited
    copy = tmp_path / "edited.toml"
    copy.write_text(edited)
    by_hand = _report(run_cli("sim", str(copy), "--json"))
    by_option = _report(
        run_cli(
            "sim",
            str(LOSSY),
            "--json",
            "--set",
            "links[lossy].loss=0.05",
            "--set",
            "flows[0].cc=olia",
        )
    )
    assert by_option == by_hand
    assert by_option != _report(run_cli("sim", str(LOSSY), "--json"))


@pytest.mark.parametrize("command", ["sim", "emu"])
@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (
            "links[lossyy].loss=0.05",
            "error: --set links[lossyy].loss=0.05: lossy_paths.toml has no element of links with "
            "id 'lossyy'; ids: lossy, clean",
        ),
        (
            "links[lossy].los=0.05",
            "error: --set links[lossy].los=0.05: unknown field 'los' (did you mean 'loss'?)",
        ),
        (
            "links[lossy].loss=2",
            "error: --set links[lossy].loss=2: expected a probability in [0, 1), got 2",
        ),
        ("flows[0].cc", "error: --set: expected PATH=VALUE"),
        (
            "duration_s=4",
            f"error: {LOSSY}: warmup_s: expected a warm-up at least 0.001 s shorter than "
            "duration_s = 4 s, got 5 (with --set duration_s=4)",
        ),
    ],
)
def test_a_bad_option_is_one_line_naming_it(
    command: str, option: str, expected: str, run_cli: CliRunner
) -> None:
    out = run_cli(command, str(LOSSY), "--set", option)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), lines
