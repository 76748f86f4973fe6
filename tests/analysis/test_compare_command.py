"""``mptcplab compare``: the report's point-by-point comparison of levels, in the terminal."""

from __future__ import annotations

from pathlib import Path

from mptcplab.analysis.report import variant_comparisons


def test_every_metric_of_the_campaign_is_compared(analysis_store: Path, cli) -> None:
    code, out, err = cli("compare", str(analysis_store))
    assert code == 0, err
    compared = variant_comparisons(analysis_store)
    assert list(compared) == [
        "path0_share",
        "aggregation_benefit",
        "aggregation_benefit_measured",
        "goodput_mbps",
        "log_gain",
    ]
    for metric, table in compared.items():
        assert f"{metric}: b against a" in out
        # One factor of two levels, lia and olia, over the two designs' 8 points.
        assert len(table) == 1 and table.iloc[0]["points"] == 8
        assert table.iloc[0]["basis"] == "points"
    assert out.count("cc: olia vs lia") == 5 and out.count(" 8 points ") == 5


def test_a_chosen_metric_and_an_unknown_one(analysis_store: Path, cli) -> None:
    code, out, _ = cli("compare", str(analysis_store), "-m", "retransmits")
    assert code == 0 and "retransmits: b against a" in out and "goodput_mbps" not in out
    code, out, err = cli("compare", str(analysis_store), "-m", "goodput")
    assert code == 2 and out == ""
    assert err.strip().startswith("error: --metric: unknown metric 'goodput'")
