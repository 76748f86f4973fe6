"""Planning a campaign tells how far its designs' generation is, each design an equal share,
and ends with the whole done; the plan is the one planned without telling."""

from __future__ import annotations

from pathlib import Path

import pytest

from mptcplab import campaign

CAMPAIGN = """\
name = "plan-progress"
seed = 4
replications = 1
metrics = ["goodput_mbps"]

[design]
kind = "{kind}"
points = 12
designs = 3

[scenario]
template = "two_path"
duration_s = 1.0

[factors.cap0]
low = 1.0
high = 20.0
param = "capacity_mbps[0]"

[factors.cap1]
low = 1.0
high = 20.0
param = "capacity_mbps[1]"
"""


def _load(tmp_path: Path, kind: str) -> campaign.Campaign:
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.format(kind=kind))
    return campaign.load(path)


def test_each_design_is_a_third_and_the_whole_ends_done(tmp_path: Path) -> None:
    spec = _load(tmp_path, "wsp")
    calls: list[tuple[int, int]] = []
    told = campaign.build_plan(
        spec, backend="sim", backend_version="v", progress=lambda d, e: calls.append((d, e))
    )
    plain = campaign.build_plan(spec, backend="sim", backend_version="v")
    assert [t.row.run_key for t in told.tasks] == [t.row.run_key for t in plain.tasks]
    assert {expected for _, expected in calls} == {3000}
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == 3000
    # Each design fills its third: its closing call lands on a thousand.
    assert {1000, 2000, 3000} <= set(done)


@pytest.mark.parametrize("kind", ["lhs", "sobol"])
def test_designs_that_take_seconds_tell_nothing(tmp_path: Path, kind: str) -> None:
    calls: list[tuple[int, int]] = []
    campaign.build_plan(
        _load(tmp_path, kind),
        backend="sim",
        backend_version="v",
        progress=lambda d, e: calls.append((d, e)),
    )
    assert calls == []
