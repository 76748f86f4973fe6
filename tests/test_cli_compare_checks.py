"""``mptcplab compare -m``: a metric name the store's runs cannot have is refused as loading a
campaign refuses it, not compared into a table of "no common points"."""

from __future__ import annotations

from pathlib import Path

import pytest

from mptcplab import sim

if not sim.available():  # pragma: no cover - the build always provides it
    pytest.skip("the simulator extension is not built (make build)", allow_module_level=True)

# No reference runs; the two_path template's one flow entry is "flow". 4 runs of 1 s.
CAMPAIGN = """\
name = "compare-checks"
seed = 7
replications = 1
metrics = ["goodput_mbps"]

[design]
kind = "lhs"
points = 2

[scenario]
template = "two_path"
duration_s = 1.0

[factors.cap0]
low = 1.0
high = 20.0
param = "capacity_mbps[0]"

[factors.cc]
levels = ["lia", "olia"]
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mptcplab.campaign import load, run_campaign

    folder = tmp_path_factory.mktemp("compare-checks")
    path = folder / "campaign.toml"
    path.write_text(CAMPAIGN)
    summary = run_campaign(load(path), output=folder / "store.sqlite", progress=False, jobs=1)
    assert summary.failed == 0
    return summary.store


def test_a_flow_entry_the_scenarios_do_not_have_is_refused(cli, store: Path) -> None:
    code, out, err = cli("compare", str(store), "-m", "user_goodput_mbps.nosuch")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --metric: metric 'user_goodput_mbps.nosuch' names flow entry 'nosuch', which "
        "the campaign's scenarios do not have; their flow entries: flow"
    )
    code, out, err = cli("compare", str(store), "-m", "user_goodput_mbps.flow")
    assert code == 0, err
    assert "user_goodput_mbps.flow: b against a" in out and "2 points" in out


def test_the_flow_placeholder_is_refused_with_the_stores_entries(cli, store: Path) -> None:
    code, out, err = cli("compare", str(store), "-m", "group_goodput_mbps.<flow>")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --metric: write a flow entry's id in place of <flow>, e.g. "
        "'group_goodput_mbps.flow' for the users of flow entry 'flow'; the store's flow "
        "entries: flow"
    )


def test_a_reference_metric_of_a_store_without_reference_runs_is_refused(cli, store: Path) -> None:
    code, out, err = cli("compare", str(store), "-m", "goodput_mbps", "-m", "log_gain")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --metric: metric 'log_gain' compares with single-path TCP runs, which the "
        "store does not hold: its campaign has no reference_runs = true"
    )


def test_a_metric_no_finished_run_has_a_value_of_is_refused_with_its_need(cli, store: Path) -> None:
    code, out, err = cli("compare", str(store), "-m", "block_latency_p50_ms")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --metric: metric 'block_latency_p50_ms' has no value in any finished run of the "
        'store: it needs a flow writing blocks (app = { kind = "blocks" })'
    )
    code, out, err = cli("compare", str(store), "-m", "jain_fairness")
    assert code == 2 and "it needs two bulk flows or more" in err
