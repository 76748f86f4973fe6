"""Congestion windows over time across a campaign: the report's median window per variant is the
median of the runs' own traces, and it is drawn only where traces can be pooled (one point per
variant, windows traced)."""

from __future__ import annotations

import numpy as np
import pytest

from mptcplab.analysis.tables import to_pandas
from mptcplab.analysis.windows import window_traces
from mptcplab.campaign.store import Store

CAMPAIGN = """\
name = "windows"
seed = 4
replications = 3

[scenario]
template = "responsiveness"
duration_s = 24.0
warmup_s = 2.0
cross_flows = 2
cross_start_s = 6.0
cross_stop_s = 12.0
trace_interval_ms = 200.0

[factors.cc]
param = "cc"
levels = ["lia", "olia"]
"""


@pytest.fixture
def store(ran_campaign):
    return ran_campaign(CAMPAIGN, "windows")


def test_each_sample_is_the_median_of_the_runs_windows(store) -> None:
    _, db = store
    with Store(db) as st:
        runs = to_pandas(st)
        traces = window_traces(st, runs)
        assert traces is not None
        # Both subflows of the MPTCP entry, and the cross entry's two users as one series.
        assert set(traces.series) == {"mptcp/0", "mptcp/1", "cross/0"}
        assert traces.events == [(6.0, "cross starts"), (12.0, "cross stops")]
        for variant in ("cc=lia", "cc=olia"):
            keys = runs.loc[runs["variant"] == variant, "run_key"]
            runs_windows = [
                next(s["values"] for s in st.report(k)["traces"]["cwnd"] if s["name"] == "mptcp/1")
                for k in keys
            ]
            t, median = traces.series["mptcp/1"][variant]
            assert t[0] == 0.0 and t[1] == pytest.approx(0.2)
            assert np.allclose(median, np.median(np.array(runs_windows), axis=0) / 1448)


def test_the_report_draws_windows_only_for_one_point_per_variant_with_windows_traced(
    store, cli, write_campaign
) -> None:
    path, _ = store
    out = path.parent / "report.html"
    assert cli("report", str(path), "-o", str(out))[0] == 0
    assert 'id="windows"' in out.read_text()

    designed = write_campaign(
        CAMPAIGN.replace('name = "windows"', 'name = "designed"').replace(
            '[factors.cc]\nparam = "cc"\nlevels = ["lia", "olia"]',
            '[design]\nkind = "lhs"\npoints = 2\n\n[factors.delay]\nparam = "one_way_ms"\n'
            "low = 5.0\nhigh = 15.0",
        ),
        name="designed.toml",
    )
    code, _, err = cli("run", str(designed), "-q")
    assert code == 0, err
    assert cli("report", str(designed), "-o", str(out))[0] == 0
    assert 'id="windows"' not in out.read_text()
