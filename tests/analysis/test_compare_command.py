"""``mptcplab compare``: the report's point-by-point comparison of levels, in the terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mptcplab.analysis.report import variant_comparisons


def _compare(*args: str, monkeypatch, capsys) -> tuple[int, str, str]:
    from mptcplab import cli

    monkeypatch.setattr(sys, "argv", ["mptcplab", "compare", *args])
    code = 0
    try:
        cli.main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_metric_of_the_campaign_is_compared(
    analysis_store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _compare(str(analysis_store), monkeypatch=monkeypatch, capsys=capsys)
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
        assert f"{metric}: b against a, point by point" in out
        # One factor of two levels, lia and olia, over the two designs' 8 points.
        assert len(table) == 1 and table.iloc[0]["points"] == 8
    assert out.count(" lia ") == 5 and out.count(" olia ") == 5


def test_a_chosen_metric_and_an_unknown_one(
    analysis_store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _compare(
        str(analysis_store), "-m", "retransmits", monkeypatch=monkeypatch, capsys=capsys
    )
    assert code == 0 and "retransmits: b against a" in out and "goodput_mbps" not in out
    code, out, err = _compare(
        str(analysis_store), "-m", "goodput", monkeypatch=monkeypatch, capsys=capsys
    )
    assert code == 2 and out == ""
    assert err.strip().startswith("error: --metric: unknown metric 'goodput'")
