"""On a terminal, the commands that work for a while say what they are doing: the design being
generated and measured, a campaign's planning, the report's progress. In a pipe or a log they
print none of it (tests/campaign/test_campaign_runner.py checks the log side for `run`)."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from mptcplab import sim

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _on_a_terminal(*args: str, cwd: Path) -> str:
    """Run ``mptcplab ARGS`` with a pseudo-terminal as stdout and stderr; its output, escape
    sequences removed."""
    main, secondary = os.openpty()
    env = dict(os.environ, COLUMNS="120", TERM="xterm")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mptcplab.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        cwd=cwd,
        env=env,
    )
    os.close(secondary)
    chunks = []
    while True:
        ready, _, _ = select.select([main], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError("no output for 120 s")
        try:
            data = os.read(main, 65536)
        except OSError:  # the other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=60) == 0, b"".join(chunks).decode(errors="replace")
    return ANSI.sub("", b"".join(chunks).decode(errors="replace").replace("\r", "\n"))


def test_design_says_it_generates_then_measures() -> None:
    out = _on_a_terminal("design", "--kind", "wsp", "-d", "3", "-n", "40", "--show", "0", cwd=ROOT)
    assert "generating a wsp design" in out
    assert "measuring its quality" in out
    assert out.index("generating a wsp design") < out.index("measuring its quality")


def test_a_wsp_design_counts_its_search_steps() -> None:
    # 200 points in four dimensions: a few seconds of search, several redraws of the bar.
    out = _on_a_terminal("design", "--kind", "wsp", "-d", "4", "-n", "200", "--show", "0", cwd=ROOT)
    steps = [(int(a), int(b)) for a, b in re.findall(r"step (\d+)/(\d+)", out)]
    assert steps, out
    assert all(0 < done <= expected for done, expected in steps)
    # While it bisects it expects log2(diameter / 1e-13) steps: 45 for the cube's diameter 2.
    assert steps[0][1] in (45, steps[0][0])


@pytest.mark.skipif(not sim.available(), reason="simulator extension not built")
def test_a_campaign_says_it_plans_and_the_report_says_it_works(tmp_path: Path) -> None:
    campaign = tmp_path / "c.toml"
    campaign.write_text(
        'name = "bars"\nseed = 1\n[design]\nkind = "lhs"\npoints = 3\n'
        '[scenario]\ntemplate = "two_path"\nduration_s = 1.0\n'
        '[factors.cc]\nlevels = ["lia", "olia"]\n'
    )
    out = _on_a_terminal("run", str(campaign), cwd=tmp_path)
    assert "bars: planning the runs" in out and "2/2 done in results/bars" in out
    # The bar redraws a few times a second: a small report is done before it names a section.
    out = _on_a_terminal("report", str(campaign), cwd=tmp_path)
    assert "reading the store" in out and "wrote results/bars/report.html" in out


@pytest.mark.skipif(not sim.available(), reason="simulator extension not built")
def test_status_says_it_plans_a_campaign_before_it_counts(tmp_path: Path) -> None:
    campaign = tmp_path / "c.toml"
    campaign.write_text(
        'name = "planned"\nseed = 1\n[design]\nkind = "wsp"\npoints = 150\n'
        '[scenario]\ntemplate = "two_path"\nduration_s = 1.0\n'
        '[factors.capacity0_mbps]\nlow = 1.0\nhigh = 50.0\nparam = "capacity_mbps[0]"\n'
        '[factors.capacity1_mbps]\nlow = 1.0\nhigh = 50.0\nparam = "capacity_mbps[1]"\n'
        '[factors.rtt0_ms]\nlow = 1.0\nhigh = 50.0\nparam = "rtt_ms[0]"\n'
    )
    out = _on_a_terminal("status", str(campaign), cwd=tmp_path)
    assert "planned: planning the runs" in out
    assert "planned: not started — 150 runs planned" in out
