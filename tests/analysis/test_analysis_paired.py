"""Variants compared point by point: the interval and the test against exact binomial sums, the
pairing of levels against synthetic medians with a known effect."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mptcplab.analysis.paired import compare_variants, median_interval, paired_differences


def _binomial_cdf(k: int, n: int) -> float:
    """P(Bin(n, 1/2) <= k), by counting."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


@pytest.mark.parametrize("n", [6, 7, 10, 17, 30, 41])
def test_the_interval_is_the_sign_tests_order_statistics(n: int) -> None:
    values = np.random.default_rng(n).normal(size=n)
    k = max(j for j in range(1, n + 1) if _binomial_cdf(j - 1, n) <= 0.025)
    ordered = np.sort(values)
    assert median_interval(values) == (ordered[k - 1], ordered[n - k])


@pytest.mark.parametrize("n", [1, 3, 5])
def test_too_few_values_have_no_95_percent_interval(n: int) -> None:
    # P(all n of one sign) = 2 / 2**n > 0.05 up to n = 5.
    low, high = median_interval(np.arange(n, dtype=float))
    assert math.isnan(low) and math.isnan(high)


def test_the_interval_covers_the_median_as_often_as_it_says() -> None:
    # A skewed distribution (exponential, median ln 2); exact coverage 1 - 2 P(B <= k - 1).
    n, trials = 20, 4000
    k = max(j for j in range(1, n + 1) if _binomial_cdf(j - 1, n) <= 0.025)
    exact = 1 - 2 * _binomial_cdf(k - 1, n)
    rng = np.random.default_rng(3)
    covered = 0
    for _ in range(trials):
        low, high = median_interval(rng.exponential(size=n))
        covered += low <= math.log(2) <= high
    assert exact >= 0.95
    assert abs(covered / trials - exact) < 0.015


def _exact_sign_test_p(d: np.ndarray) -> float:
    """Two-sided exact sign test: twice the smaller tail of Bin(n, 1/2) at the count of
    positive differences, zeros dropped."""
    nonzero = d[d != 0]
    n, k = nonzero.size, int((nonzero > 0).sum())
    return min(1.0, 2 * _binomial_cdf(min(k, n - k), n))


def _medians(differences: dict[str, np.ndarray], base: np.ndarray) -> pd.DataFrame:
    """Per-point medians of variants cc=lia and cc=olia (b), under one `buf` level each key."""
    rows = []
    for buf, d in differences.items():
        for point, (x, dx) in enumerate(zip(base, d, strict=True)):
            rows.append({"design": 0, "point": point, "cc": "lia", "buf": buf, "m": x})
            rows.append({"design": 0, "point": point, "cc": "olia", "buf": buf, "m": x + dx})
    frame = pd.DataFrame(rows)
    frame["variant"] = "cc=" + frame["cc"] + ", buf=" + frame["buf"]
    frame.attrs["levels"] = ["cc", "buf"]
    return frame


def test_the_p_value_is_the_exact_sign_tests() -> None:
    rng = np.random.default_rng(11)
    d = rng.normal(0.4, 1.0, size=12)
    frame = _medians({"auto": d}, rng.uniform(1, 5, size=12))
    row = compare_variants(frame, "m").iloc[0]
    assert row["points"] == 12
    assert row["p_value"] == pytest.approx(_exact_sign_test_p(d), rel=1e-9)
    assert row["median_difference"] == pytest.approx(float(np.median(d)))


def test_levels_are_paired_with_the_other_factors_held() -> None:
    rng = np.random.default_rng(5)
    n = 25
    base = rng.uniform(1, 10, size=n)
    # OLIA is 1 higher with auto buffers, the same as LIA with fixed ones.
    frame = _medians({"auto": np.ones(n), "fixed": np.zeros(n)}, base)
    out = compare_variants(frame, "m", higher_is_better=True).set_index(["factor", "with"])
    auto = out.loc[("cc", "buf=auto")]
    assert (auto["a"], auto["b"], auto["points"]) == ("lia", "olia", n)
    assert (auto["median_difference"], auto["ci_low"], auto["ci_high"]) == (1.0, 1.0, 1.0)
    assert auto["b_higher_share"] == 1.0
    assert auto["verdict"] == "olia higher (better)"
    fixed = out.loc[("cc", "buf=fixed")]
    assert fixed["median_difference"] == 0 and fixed["p_value"] == 1.0
    assert fixed["verdict"] == "no difference shown"
    # The buffer compared under each congestion control: LIA is the same under both.
    assert out.loc[("buf", "cc=lia"), "p_value"] == 1.0
    assert out.loc[("buf", "cc=olia"), "verdict"] == "fixed lower (worse)"
    assert len(out) == 4


def test_adjusted_p_values_are_benjamini_hochbergs() -> None:
    rng = np.random.default_rng(8)
    n = 15
    frame = _medians(
        {"auto": rng.normal(0.3, 1, n), "fixed": rng.normal(0.8, 1, n)}, rng.uniform(1, 5, n)
    )
    out = compare_variants(frame, "m")
    p = out["p_value"].to_numpy()
    m = p.size
    order = np.argsort(p)
    # p_(i) * m / i, made monotone from the largest down, capped at 1.
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1].clip(max=1)
    expected = np.empty(m)
    expected[order] = adjusted
    assert out["p_adjusted"].to_numpy() == pytest.approx(expected)


def test_points_one_variant_lacks_are_left_out_and_a_metric_of_no_points_is_said() -> None:
    n = 10
    frame = _medians({"auto": np.full(n, 2.0)}, np.arange(n, dtype=float))
    frame.loc[(frame["cc"] == "olia") & (frame["point"] < 3), "m"] = np.nan
    frame = frame.drop(frame[(frame["cc"] == "lia") & (frame["point"] == 9)].index)
    row = compare_variants(frame, "m").iloc[0]
    assert row["points"] == n - 4
    frame["m"] = np.nan
    assert compare_variants(frame, "m").iloc[0]["verdict"] == "no common points"


def test_a_campaign_without_qualitative_factors_compares_nothing() -> None:
    frame = pd.DataFrame({"design": [0], "point": [0], "variant": [""], "m": [1.0]})
    frame.attrs["levels"] = []
    assert compare_variants(frame, "m").empty


def test_the_interval_excludes_zero_exactly_where_the_test_rejects() -> None:
    rng = np.random.default_rng(21)
    rejected = 0
    for trial in range(300):
        n = int(rng.integers(6, 60))
        d = rng.normal(rng.uniform(-0.8, 0.8), 1.0, size=n)
        frame = _medians({"auto": d}, np.zeros(n))
        row = compare_variants(frame, "m").iloc[0]
        excludes = not row["ci_low"] <= 0 <= row["ci_high"]
        assert excludes == (row["p_value"] < 0.05), (trial, n, row.to_dict())
        rejected += excludes
    assert 30 < rejected < 270  # both outcomes were exercised


def test_the_differences_are_those_of_each_compared_pair() -> None:
    rng = np.random.default_rng(2)
    n = 9
    d_auto, d_fixed = rng.normal(1, 1, n), rng.normal(-1, 1, n)
    frame = _medians({"auto": d_auto, "fixed": d_fixed}, rng.uniform(1, 5, n))
    differences = dict(paired_differences(frame, "m"))
    compared = compare_variants(frame, "m")
    # One entry per row of the comparison, in its order.
    assert len(differences) == len(compared)
    assert differences["olia − lia, buf=auto"] == pytest.approx(d_auto)
    assert differences["olia − lia, buf=fixed"] == pytest.approx(d_fixed)
    assert differences["fixed − auto, cc=lia"] == pytest.approx(np.zeros(n))
    for (_, d), row in zip(paired_differences(frame, "m"), compared.itertuples(), strict=True):
        assert float(np.median(d)) == pytest.approx(row.median_difference)


def test_a_median_difference_of_zero_takes_the_direction_the_sign_test_judged() -> None:
    """Level b is equal at 12 points and higher at 8, never lower: the median difference is 0,
    the sign test (zeros dropped) rejects with p = 2·2⁻⁸, and the direction is b higher. The
    share of points where b is higher counts the ties half: (8 + 6) / 20."""
    d = np.array([0.0] * 12 + [1.0] * 8)
    frame = _medians({"auto": d}, np.linspace(1, 5, d.size))
    row = compare_variants(frame, "m", higher_is_better=False).iloc[0]
    assert row["median_difference"] == 0.0
    assert row["p_value"] == pytest.approx(2 * 0.5**8)
    assert row["b_higher_share"] == pytest.approx(14 / 20)
    assert row["verdict"] == "olia higher (worse)"
