"""The campaign API called from a notebook: its documented example loads, and a bad argument is
refused before anything is written."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mptcplab.campaign.spec as spec
from mptcplab.campaign import load, run_campaign
from mptcplab.errors import UserError
from mptcplab.scenario import templates


def _docstring_example() -> str:
    doc = spec.__doc__ or ""
    block = doc.split("::\n\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines))


def test_the_modules_example_campaign_loads(tmp_path: Path) -> None:
    # Its buffer level once set `rcvbuf_bytes`, which two_path does not take.
    path = tmp_path / "example.toml"
    path.write_text(_docstring_example())
    campaign = load(path)
    assert [q.name for q in campaign.qualitative] == ["cc", "buffer"]


@pytest.mark.parametrize("jobs", [0, 1.5, "2", True])
def test_jobs_is_checked_before_the_store_is_made(write_campaign, tmp_path: Path, jobs) -> None:
    store = tmp_path / "out" / "store.sqlite"
    with pytest.raises(UserError) as info:
        run_campaign(load(write_campaign()), jobs=jobs, output=store, progress=False)
    assert info.value.field == "jobs" and "expected an integer ≥ 1" in info.value.detail
    assert not store.exists()


@pytest.mark.parametrize("capacity", [0, -1, float("nan"), "10"])
def test_red_profile_names_the_capacity(capacity) -> None:
    with pytest.raises(UserError) as info:
        templates.red_profile(capacity)
    assert info.value.field == "capacity_mbps"


ONE_RUN = """
name = "one"
seed = 1
replications = 1
metrics = ["goodput_mbps"]

[design]
kind = "lhs"
points = 1

[scenario]
template = "two_path"
duration_s = 0.5

[factors.cap0]
low = 1.0
high = 2.0
param = "capacity_mbps[0]"
"""


def test_a_script_without_the_main_guard_is_told_what_to_do(tmp_path: Path) -> None:
    # Spawned workers import the script; each re-ran the whole campaign (planning, claiming
    # the store) before multiprocessing refused to start yet another process.
    (tmp_path / "one.toml").write_text(ONE_RUN)
    script = tmp_path / "script.py"
    script.write_text(
        "from mptcplab.campaign import load, run_campaign\n"
        f"run_campaign(load({str(tmp_path / 'one.toml')!r}), jobs=1, "
        f"output={str(tmp_path / 'out' / 'store.sqlite')!r}, progress=False)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    assert 'put the call in the script under `if __name__ == "__main__":`' in done.stderr
    assert "bootstrapping phase" not in done.stderr
