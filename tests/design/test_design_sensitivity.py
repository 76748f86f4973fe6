"""Sensitivity of metric percentiles to the design (spec algorithms.md §4.6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mptcplab.design import sensitivity


def test_percentiles_spread_and_relative_spread_by_hand() -> None:
    # 0..10 and 2..12: every percentile differs by 2, sample std = sqrt(2), pooled range = 12.
    a = np.arange(11.0)
    b = a + 2.0
    table = sensitivity([a, b])
    assert table.index.tolist() == [5.0, 25.0, 50.0, 75.0, 95.0]
    assert table.loc[50.0, "design_0"] == 5.0
    assert table.loc[50.0, "design_1"] == 7.0
    assert table.loc[25.0, "design_0"] == 2.5
    assert table.loc[95.0, "design_1"] == pytest.approx(11.5)
    assert np.allclose(table["std"], math.sqrt(2))
    assert np.allclose(table["range"], 12.0)
    assert np.allclose(table["relative_std"], math.sqrt(2) / 12)
    assert np.allclose(table["mean"], table[["design_0", "design_1"]].mean(axis=1))


def test_population_std_and_nan_runs() -> None:
    a = np.array([1.0, 2.0, 3.0, np.nan])
    b = np.array([1.0, 2.0, 3.0])
    c = np.array([4.0, 5.0, 6.0])
    table = sensitivity([a, b, c], percentiles=[50], ddof=0)
    medians = [2.0, 2.0, 5.0]
    assert table.loc[50.0, "std"] == pytest.approx(np.std(medians))
    assert table.loc[50.0, "relative_std"] == pytest.approx(np.std(medians) / 5.0)


def test_identical_designs_have_zero_spread() -> None:
    table = sensitivity([np.ones(5), np.ones(5)])
    assert np.all(table["std"] == 0) and np.all(table["relative_std"] == 0)


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        ([np.arange(3.0)], {}, "at least 2 designs"),
        ([np.arange(3.0), np.array([np.nan])], {}, "design 1 has no"),
        ([np.arange(3.0), np.arange(3.0)], {"percentiles": [101]}, "percentiles"),
        (np.arange(3.0), {}, "one array of metric values per design"),
    ],
)
def test_bad_input(data, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sensitivity(data, **kwargs)


def test_percentiles_and_ddof_take_numbers_of_their_kind_only() -> None:
    data = [[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]]
    refused = [
        # A string is iterable: "50" was read as the percentiles 5 and 0.
        ({"percentiles": "50"}, r"^percentiles: expected a list of numbers in \[0, 100\]"),
        ({"percentiles": 50}, r"^percentiles: expected a list of numbers"),
        ({"percentiles": [True, 50]}, r"^percentiles: expected a list of numbers.*True"),
        ({"percentiles": ["50"]}, r"^percentiles: expected a list of numbers.*'50'"),
        ({"ddof": -1}, r"^ddof: expected an integer >= 0, got -1$"),
        ({"ddof": 1.5}, r"^ddof: expected an integer >= 0, got 1.5$"),
        ({"ddof": True}, r"^ddof: expected an integer >= 0, got True$"),
    ]
    for kwargs, message in refused:
        with pytest.raises(ValueError, match=message):
            sensitivity(data, **kwargs)
    a, b = np.arange(11.0), np.arange(11.0) ** 2
    table = sensitivity([a, b], percentiles=np.array([10, 50]), ddof=np.int64(0))
    assert table.index.tolist() == [10.0, 50.0]
    assert table.loc[50.0, "std"] == pytest.approx(np.std([np.median(a), np.median(b)]))


def test_design_keys_that_name_one_column_are_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^metric_by_design: design keys \[1, '1'\] give the same"
    ):
        sensitivity({1: [1.0, 2.0], "1": [3.0, 4.0]})
