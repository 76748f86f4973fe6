"""Published figures beside a campaign's runs: which runs an entry's settings select, and the
median, range and difference set beside the published value (hand-computed)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mptcplab.analysis.published import (
    compare_published,
    display_table,
    same_setting,
    settings_match,
)
from mptcplab.campaign.spec import PublishedSpec


def _runs() -> pd.DataFrame:
    # Two points (n1 10 and 30) × two cc levels × three replications, one failed run and one
    # reference run that must not count.
    rows = []
    values = {
        (10, "lia"): [0.70, 0.74, 0.72],
        (10, "olia"): [0.86, 0.80, 0.90],
        (30, "lia"): [0.44, 0.40, 0.50],
        (30, "olia"): [0.75, 0.70, 0.74],
    }
    for (n1, cc), goodputs in values.items():
        for rep, g in enumerate(goodputs):
            rows.append(
                {
                    "role": "main",
                    "status": "done",
                    "replication": rep,
                    "n1": str(n1),  # a qualitative level, stored as its label
                    "cc": cc,
                    "c1": 1.0000000000001,  # a quantitative value after scaling
                    "user_goodput_mbps.type2": g,
                }
            )
    rows.append({**rows[0], "status": "failed", "user_goodput_mbps.type2": float("nan")})
    rows.append({**rows[0], "role": "reference", "user_goodput_mbps.type2": 100.0})
    return pd.DataFrame.from_records(rows)


def _entry(**fields) -> PublishedSpec:
    return PublishedSpec.model_validate(
        {"source": "draft", "metric": "user_goodput_mbps.type2", "value": 0.70, **fields}
    )


def test_settings_compare_levels_as_labels_and_numbers_to_a_relative_tolerance() -> None:
    assert same_setting("10", 10) and same_setting(10.0, "10") and same_setting("1.0", 1)
    assert same_setting(1.0 + 1e-12, 1) and not same_setting(1.001, 1)
    assert same_setting("true", True) and not same_setting("1", True)
    assert same_setting("lia", "lia") and not same_setting("lia", "olia")
    assert settings_match({"n1": 10, "cc": "lia"}, {"n1": "10", "cc": "lia", "c1": 2.0})
    assert not settings_match({"n1": 10, "cc": "lia"}, {"n1": "10"})  # cc unknown to the run
    assert settings_match({}, {"n1": "30"})


def test_each_entry_gets_the_median_of_its_runs_and_its_difference() -> None:
    entries = [
        _entry(at={"n1": 10, "cc": "lia"}, tolerance=0.05),
        _entry(at={"n1": 30, "cc": "olia"}, value=0.80, tolerance=0.05),
        _entry(at={"cc": "lia", "c1": 1}, value=0.50),  # pools both points
        _entry(at={"n1": 20}),  # no run there
    ]
    table = compare_published(_runs(), entries)
    first, second, pooled, none = table.to_dict("records")
    assert first["ours"] == pytest.approx(0.72) and first["runs"] == 3
    assert (first["ours_min"], first["ours_max"]) == (0.70, 0.74)
    assert first["difference"] == pytest.approx(0.02)
    assert first["relative"] == pytest.approx(0.02 / 0.70)
    assert first["agrees"] is True
    assert second["ours"] == pytest.approx(0.74) and second["agrees"] is False
    assert pooled["runs"] == 6
    assert pooled["ours"] == pytest.approx((0.50 + 0.70) / 2)  # median of 0.40 … 0.74
    assert pooled["agrees"] is None  # no tolerance given
    assert none["runs"] == 0 and math.isnan(none["ours"]) and none["agrees"] is None
    assert first["at"] == "n1=10, cc=lia"


def test_the_displayed_table_says_what_agrees() -> None:
    entries = [
        _entry(at={"n1": 10, "cc": "lia"}, tolerance=0.05, label="type-2, LIA, N1 = 10"),
        _entry(at={"n1": 20}),
    ]
    shown = display_table(compare_published(_runs(), entries))
    assert list(shown.columns) == [
        "source",
        "figure",
        "metric",
        "at",
        "published",
        "ours (median)",
        "runs",
        "ours, range",
        "ours − published",
        "relative",
        "agrees",
    ]
    rows = shown.to_dict("records")
    assert rows[0]["ours (median)"] == "0.72" and rows[0]["ours − published"] == "+0.02"
    assert rows[0]["ours, range"] == "0.7 – 0.74" and rows[0]["agrees"] == "yes (±0.05)"
    assert rows[1]["ours (median)"] == "–" and rows[1]["agrees"] == ""
    brief = display_table(compare_published(_runs(), entries), brief=True)
    assert list(brief["figure"]) == [
        "type-2, LIA, N1 = 10",
        "user_goodput_mbps.type2 at n1=20",
    ]
    assert "source" not in brief.columns and "relative" not in brief.columns
    # No entry gives a tolerance or a label: those columns go.
    plain = display_table(compare_published(_runs(), [_entry(at={"n1": 10})]))
    assert "agrees" not in plain.columns and "figure" not in plain.columns


def test_entries_may_be_plain_tables() -> None:
    table = compare_published(
        _runs(), [{"source": "draft", "metric": "user_goodput_mbps.type2", "value": 0.7}]
    )
    assert table.loc[0, "runs"] == 12 and table.loc[0, "at"] == "every run"


def test_a_ratio_divides_each_run_by_the_median_at_the_other_settings() -> None:
    # LIA at N1 = 30 over LIA at N1 = 10: runs 0.44, 0.40, 0.50 over the median 0.72.
    entry = _entry(at={"n1": 30, "cc": "lia"}, relative_to={"n1": 10}, value=0.6, tolerance=0.05)
    row = compare_published(_runs(), [entry]).iloc[0]
    assert row["ours"] == pytest.approx(0.44 / 0.72)
    assert row["ours_min"] == pytest.approx(0.40 / 0.72)
    assert row["ours_max"] == pytest.approx(0.50 / 0.72)
    assert row["runs"] == 3
    assert row["difference"] == pytest.approx(0.44 / 0.72 - 0.6)
    assert bool(row["agrees"]) is True  # 0.611 within 0.05 of 0.6
    assert row["at"] == "n1=30, cc=lia, relative to n1=10"


def test_a_ratio_over_a_zero_or_missing_denominator_has_no_value() -> None:
    runs = _runs()
    runs.loc[runs["n1"] == "10", "user_goodput_mbps.type2"] = 0.0
    row = compare_published(runs, [_entry(at={"n1": 30}, relative_to={"n1": 10})]).iloc[0]
    assert math.isnan(row["ours"]) and row["runs"] == 0
    none = _entry(at={"cc": "lia"}, relative_to={"cc": "reno"})
    assert compare_published(_runs(), [none]).iloc[0]["runs"] == 0


def test_a_ratios_settings_must_be_columns_of_the_runs() -> None:
    with pytest.raises(ValueError, match=r"entries\[0\]\.relative_to: 'buffer' is not a column"):
        compare_published(_runs(), [_entry(relative_to={"buffer": "auto"})])
