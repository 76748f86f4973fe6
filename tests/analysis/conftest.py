"""A small campaign store built once from real simulations: two designs (for the sensitivity
table), two congestion controls, two replications and single-path TCP reference runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from mptcplab import sim

if not sim.available():  # pragma: no cover - the build always provides it
    pytest.skip("the simulator extension is not built (make build)", allow_module_level=True)

ANALYSIS_CAMPAIGN = """\
name = "analysis"
description = "a small two-path study for the analysis tests"
seed = 5
replications = 2
reference_runs = true
# path0_share first: the critical points are ranked by the first metric with a worse end.
metrics = [
    "path0_share", "aggregation_benefit", "aggregation_benefit_measured", "goodput_mbps", "log_gain"
]

[design]
kind = "lhs"
points = 4
designs = 2
options = { optimize = false }

[scenario]
template = "two_path"
duration_s = 2.0

[factors.cap0]
low = 0.5
high = 20.0
log = true
param = "capacity_mbps[0]"

[factors.rtt1]
low = 5.0
high = 80.0
param = "rtt_ms[1]"

[factors.cc]
levels = ["lia", "olia"]
"""


@pytest.fixture(scope="session")
def analysis_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mptcplab.campaign import load, run_campaign

    folder = tmp_path_factory.mktemp("analysis")
    path = folder / "analysis.toml"
    # rtt_ms[0] and the second capacity are fixed; rtt1 and cap0 vary.
    path.write_text(
        ANALYSIS_CAMPAIGN.replace(
            "duration_s = 2.0", "duration_s = 2.0\ncapacity_mbps = [1.0, 4.0]\nrtt_ms = [20.0, 0.0]"
        )
    )
    summary = run_campaign(load(path), output=folder / "store.sqlite", progress=False, jobs=2)
    assert summary.failed == 0
    return summary.store


@pytest.fixture(scope="session")
def report_html(analysis_store: Path) -> str:
    from mptcplab.analysis.report import build_report

    return build_report(analysis_store)
