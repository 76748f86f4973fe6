"""Application block latency pooled over a campaign's runs (NSDI 2012 Fig. 7's distribution): the
blocks counted are those each run's own summary counts, and the report draws them when the runs
traced their blocks."""

from __future__ import annotations

import html

import numpy as np
import pytest

from mptcplab.analysis.latency import block_latencies, latency_table
from mptcplab.analysis.tables import to_pandas
from mptcplab.campaign.store import Store

CAMPAIGN = """\
name = "latency"
seed = 8
replications = 2

[scenario]
template = "wifi_3g"
duration_s = 6.0
warmup_s = 1.5
rcvbuf_bytes = 131072

[factors.case.levels]
tcp-wifi = { path = "wifi" }
mptcp = { penalization = "off", opportunistic_retransmit = false }
"""


@pytest.fixture
def store(ran_campaign):
    return ran_campaign(CAMPAIGN, "latency")


def test_pooled_blocks_are_the_blocks_each_run_counts_after_its_warm_up(store) -> None:
    _, db = store
    with Store(db) as st:
        runs = to_pandas(st)
        latencies = block_latencies(st, runs)
        # The simulator's own summary of each run (crates/mpsim, block_latency) counts the
        # blocks completed after the warm-up: the pooled blocks are those, every one of them.
        counted: dict[str, int] = {}
        worst: dict[str, float] = {}
        for key, variant in zip(runs["run_key"], runs["variant"], strict=True):
            summary = st.report(key)["flows"][0]["block_latency"]
            counted[variant] = counted.get(variant, 0) + summary["count"]
            worst[variant] = max(worst.get(variant, 0.0), summary["max_ms"])
    assert list(latencies) == ["case=tcp-wifi", "case=mptcp"]
    for variant, values in latencies.items():
        assert values.size == counted[variant] > 100
        assert values.max() == pytest.approx(worst[variant])
    # No block arrives before it can: one-way WiFi delay (10 ms) plus at least its 8 KiB of
    # payload at 8 Mbit/s (8.192 ms; headers only add to it).
    assert latencies["case=tcp-wifi"].min() >= 10.0 + 8192 * 8 / 8e3
    table = latency_table(latencies).set_index("variant")
    assert table.loc["case=mptcp", "blocks"] == counted["case=mptcp"]
    assert table.loc["case=tcp-wifi", "p50 ms"] == pytest.approx(
        float(np.percentile(latencies["case=tcp-wifi"], 50))
    )


def test_the_report_has_the_latency_section_only_when_blocks_were_traced(
    store, cli, write_campaign
) -> None:
    path, _ = store
    out = path.parent / "report.html"
    assert cli("report", str(path), "-o", str(out))[0] == 0
    page = html.unescape(out.read_text())
    assert 'id="latency"' in page and "case=mptcp" in page and "block latency CDF" in page

    untraced = write_campaign(
        CAMPAIGN.replace('name = "latency"', 'name = "untraced"').replace(
            "rcvbuf_bytes = 131072", "rcvbuf_bytes = 131072\ntrace = []"
        ),
        name="untraced.toml",
    )
    assert cli("run", str(untraced), "-q")[0] == 0
    assert cli("report", str(untraced), "-o", str(out))[0] == 0
    assert 'id="latency"' not in out.read_text()
