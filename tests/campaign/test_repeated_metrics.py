"""A metric named twice: refused in a campaign file, read once from --metric. Each metric is a
column of the tables, and a repeated one made two columns of one name, on which `report` and
`compare` failed with pandas' errors (AttributeError, TypeError) after the whole campaign ran."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import load, run_campaign
from mptcplab.errors import UserError


def test_a_campaign_listing_a_metric_twice_is_refused_at_its_line(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace(
        'metrics = ["aggregation_benefit", "goodput_mbps"]',
        'metrics = ["goodput_mbps", "aggregation_benefit", "goodput_mbps"]',
    )
    with pytest.raises(UserError) as info:
        load(write_campaign(text))
    assert info.value.field == "metrics[2]" and info.value.line == 4
    assert "'goodput_mbps' is listed twice" in info.value.detail


def test_a_metric_given_twice_to_compare_is_compared_once(
    write_campaign, cli, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite"
    run_campaign(load(write_campaign()), output=store, progress=False)
    code, once, err = cli("compare", str(store), "-m", "goodput_mbps")
    assert code == 0, err
    code, twice, err = cli("compare", str(store), "-m", "goodput_mbps", "-m", "goodput_mbps")
    assert code == 0, err
    assert twice == once
