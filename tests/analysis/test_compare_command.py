"""``mptcplab compare``: the report's point-by-point comparison of levels, in the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

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


# Only qualitative factors: every variant runs at one point, as a reproduction's settings do.
ONE_POINT_CAMPAIGN = """\
name = "one-point"
seed = 3
replications = 5
metrics = ["goodput_mbps"]

[scenario]
template = "two_path"
duration_s = 5.0
capacity_mbps = [4.0, 4.0]
loss = [0.01, 0.01]

[factors.cc]
levels = ["lia", "reno"]
"""


def test_variants_at_one_point_are_compared_over_their_runs(tmp_path: Path, cli) -> None:
    from mptcplab.campaign import load, run_campaign

    path = tmp_path / "one-point.toml"
    path.write_text(ONE_POINT_CAMPAIGN)
    summary = run_campaign(load(path), output=tmp_path / "s.sqlite", progress=False, jobs=2)
    assert summary.failed == 0
    code, out, err = cli("compare", str(summary.store))
    assert code == 0, err
    row = variant_comparisons(summary.store)["goodput_mbps"].iloc[0]
    assert (row["points"], row["basis"]) == (1, "5 + 5 runs")
    # Uncoupled Reno subflows on two lossy paths take about twice what LIA's coupled ones do.
    assert row["verdict"] == "reno higher (better)" and row["b_higher_share"] == 1.0
    assert "cc: reno vs lia" in out and "5 + 5 runs" in out and "reno higher (better)" in out


def test_the_comparisons_as_csv_to_a_file_and_to_standard_output(
    analysis_store: Path, cli, tmp_path: Path
) -> None:
    import io

    import pandas as pd

    out = tmp_path / "cmp" / "comparisons.csv"
    code, stdout, err = cli("compare", str(analysis_store), "--csv", str(out))
    assert code == 0 and stdout == "", err
    assert f"wrote 5 comparisons to {out}" in err
    written = pd.read_csv(out)
    expected = variant_comparisons(analysis_store)
    assert list(written["metric"]) == list(expected)
    for metric, table in expected.items():
        row = written[written["metric"] == metric].iloc[0]
        assert row["p_value"] == pytest.approx(table.iloc[0]["p_value"])
        assert row["median_difference"] == pytest.approx(table.iloc[0]["median_difference"])
        assert (row["a"], row["b"], row["basis"]) == ("lia", "olia", "points")
    code, stdout, err = cli("compare", str(analysis_store), "-m", "goodput_mbps", "--csv", "-")
    assert code == 0 and "wrote 1 comparison to standard output" in err
    assert len(pd.read_csv(io.StringIO(stdout))) == 1
