"""``mptcplab metrics``: the list a user picks a campaign's metrics from is the list a campaign
file accepts, and says which metrics need the single-path reference runs."""

from __future__ import annotations

import json

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import load
from mptcplab.errors import UserError

METRICS_LINE = 'metrics = ["aggregation_benefit", "goodput_mbps"]'


def _listed(cli) -> list[dict[str, object]]:
    code, out, _ = cli("metrics", "--json")
    assert code == 0
    return json.loads(out)


def test_every_listed_metric_is_accepted_by_a_campaign_as_described(cli, write_campaign) -> None:
    listed = _listed(cli)
    assert {"goodput_mbps", "aggregation_benefit", "log_gain", "path0_share"} <= {
        row["name"] for row in listed
    }
    assert [row["name"] for row in listed if row["flow_entry"]] == [
        "user_goodput_mbps.<flow>",
        "group_goodput_mbps.<flow>",
        "fair_share_mbps.<flow>",
        "fair_share_probing_mbps.<flow>",
        "cwnd_recovery_s.<flow>",
    ]
    needs = {row["name"]: row["needs"] for row in listed}
    assert str(needs["block_latency_p50_ms"]).startswith("a flow writing blocks")
    assert needs["goodput_mbps"] is None
    for row in listed:
        # The flow entry of the two_path template's scenarios is 'flow'.
        name = str(row["name"]).replace("<flow>", "flow")
        text = SMALL_CAMPAIGN.replace(METRICS_LINE, f'metrics = ["{name}"]')
        if row["needs_reference_runs"]:
            with pytest.raises(UserError, match="set reference_runs = true"):
                load(write_campaign(text))
            text = text.replace("replications = 2", "replications = 2\nreference_runs = true")
        assert load(write_campaign(text)).spec.metrics == [name]


def test_the_table_names_each_metric_and_its_worse_end(cli) -> None:
    code, out, _ = cli("metrics")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for row in _listed(cli):
        assert row["name"] in lines
    assert " higher " in lines["goodput_mbps"]
    assert " lower " in lines["completion_s"]
    assert " neither " in lines["path0_share"]
    assert "needed" in lines["log_gain"] and "needed" not in lines["goodput_mbps"]


def test_an_unknown_metric_in_a_campaign_is_refused(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace(METRICS_LINE, 'metrics = ["path_share"]')
    with pytest.raises(UserError, match="unknown metric 'path_share'; did you mean 'path0_share'"):
        load(write_campaign(text))
