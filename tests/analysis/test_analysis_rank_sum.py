"""Two samples compared by ranks: the null distribution against counting every ordering, the
interval against its order statistics and its coverage, the test against the exact one; and the
comparison of two variants that share a single point, over their replications."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from mptcplab import sim
from mptcplab.analysis.paired import compare_variants
from mptcplab.analysis.rank_sum import compare_samples, null_cdf


def _counted_cdf(m: int, n: int) -> np.ndarray:
    """P(U <= u) by listing every placement of the m a's among m + n ranks."""
    counts = np.zeros(m * n + 1)
    for a_ranks in itertools.combinations(range(m + n), m):
        # U counts pairs (a, b) with b above a: for each a, the b's above it.
        above = sum((m + n - 1 - r) - sum(1 for s in a_ranks if s > r) for r in a_ranks)
        counts[above] += 1
    return np.cumsum(counts) / math.comb(m + n, m)


@pytest.mark.parametrize(("m", "n"), [(1, 1), (2, 3), (3, 3), (4, 6), (5, 5), (7, 4)])
def test_the_null_distribution_counts_every_ordering(m: int, n: int) -> None:
    assert null_cdf(m, n) == pytest.approx(_counted_cdf(m, n), abs=1e-12)


def _k(m: int, n: int) -> int:
    cdf = _counted_cdf(m, n)
    return max((k for k in range(1, m * n + 1) if cdf[k - 1] <= 0.025), default=0)


@pytest.mark.parametrize(("m", "n"), [(5, 5), (4, 7), (8, 8), (10, 6)])
def test_the_shift_and_interval_are_the_pairwise_differences_order_statistics(m, n) -> None:
    rng = np.random.default_rng(m * 100 + n)
    a, b = rng.normal(size=m), rng.normal(0.5, 1.0, size=n)
    differences = sorted(y - x for x in a for y in b)
    k = _k(m, n)
    result = compare_samples(a, b)
    assert result.shift == pytest.approx(float(np.median(differences)))
    assert (result.low, result.high) == (differences[k - 1], differences[m * n - k])
    assert result.b_higher_share == pytest.approx(sum(d > 0 for d in differences) / (m * n))


@pytest.mark.parametrize(("m", "n"), [(3, 3), (2, 6), (1, 30)])
def test_too_small_samples_have_no_95_percent_interval(m: int, n: int) -> None:
    # P(U = 0) = 1 / C(m + n, m) > 0.025 for these sizes.
    result = compare_samples(np.arange(m, dtype=float), np.arange(n, dtype=float) + 10)
    assert math.isnan(result.low) and math.isnan(result.high)


def test_five_runs_apart_give_the_smallest_p_there_is() -> None:
    result = compare_samples([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0])
    # Two orderings of C(10, 5) = 252 are this extreme, one each way.
    assert result.p_value == pytest.approx(2 / 252)
    assert result.b_higher_share == 1.0 and result.low > 0


def test_the_interval_covers_the_shift_as_often_as_it_says() -> None:
    # Skewed samples (exponential) that differ by a shift of 0.7.
    m = n = 8
    k = _k(m, n)
    exact = 1 - 2 * _counted_cdf(m, n)[k - 1]
    rng = np.random.default_rng(4)
    trials, covered = 4000, 0
    for _ in range(trials):
        result = compare_samples(rng.exponential(size=m), rng.exponential(size=n) + 0.7)
        covered += result.low <= 0.7 <= result.high
    assert exact >= 0.95
    assert abs(covered / trials - exact) < 0.015


def test_the_interval_excludes_zero_exactly_where_the_test_rejects() -> None:
    rng = np.random.default_rng(9)
    rejected = 0
    for _ in range(300):
        m, n = (int(x) for x in rng.integers(4, 12, size=2))
        result = compare_samples(rng.normal(size=m), rng.normal(rng.uniform(-1.5, 1.5), size=n))
        excludes = not result.low <= 0 <= result.high
        assert excludes == (result.p_value < 0.05)
        rejected += excludes
    assert 30 < rejected < 270


def test_equal_samples_show_no_difference() -> None:
    result = compare_samples([2.0] * 5, [2.0] * 5)
    assert (result.shift, result.low, result.high, result.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert result.b_higher_share == 0.5


def _frames(values: list[tuple[int, str, int, float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Finished runs (point, cc, replication, metric m), as a campaign stores them, and their
    medians."""
    runs = pd.DataFrame(
        [
            {
                "design": 0,
                "point": point,
                "cc": cc,
                "variant": f"cc={cc}",
                "replication": r,
                "role": "main",
                "status": "done",
                "m": m,
            }
            for point, cc, r, m in values
        ]
    )
    runs.attrs["levels"] = ["cc"]
    medians = runs.groupby(["design", "point", "variant", "cc"], sort=False)["m"].median()
    medians = medians.reset_index()
    medians.attrs["levels"] = ["cc"]
    return runs, medians


def _runs(points: int, shift: float, replications: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs of cc = lia and cc = olia (``shift`` higher) at ``points`` points, and their
    medians."""
    rng = np.random.default_rng(points)
    values = []
    for point in range(points):
        base = rng.uniform(1, 5)
        for cc, extra in (("lia", 0.0), ("olia", shift)):
            for r in range(replications):
                values.append((point, cc, r, base + extra + rng.normal(0, 0.1)))
    return _frames(values)


def test_variants_sharing_one_point_are_compared_over_their_replications() -> None:
    runs, medians = _runs(points=1, shift=1.0)
    # Without the runs, one point gives no interval.
    assert compare_variants(medians, "m").iloc[0]["verdict"] == "too few points"
    row = compare_variants(medians, "m", higher_is_better=True, runs=runs).iloc[0]
    a = runs.loc[runs["cc"] == "lia", "m"].to_numpy()
    b = runs.loc[runs["cc"] == "olia", "m"].to_numpy()
    assert (row["points"], row["basis"]) == (1, "5 + 5 runs")
    assert row["median_difference"] == pytest.approx(float(np.median(np.subtract.outer(b, a))))
    assert row["p_value"] == pytest.approx(2 / 252)
    assert row["verdict"] == "olia higher (better)"
    # No shift: no difference shown.
    runs, medians = _runs(points=1, shift=0.0)
    row = compare_variants(medians, "m", runs=runs).iloc[0]
    assert row["ci_low"] <= 0 <= row["ci_high"]
    assert row["verdict"] == "no difference shown"


def test_three_runs_a_side_are_too_few_and_two_points_stay_paired() -> None:
    runs, medians = _runs(points=1, shift=1.0, replications=3)
    assert compare_variants(medians, "m", runs=runs).iloc[0]["verdict"] == "too few runs"
    runs, medians = _runs(points=2, shift=1.0)
    row = compare_variants(medians, "m", runs=runs).iloc[0]
    assert (row["points"], row["basis"], row["verdict"]) == (2, "points", "too few points")


def test_the_runs_compared_are_those_of_the_one_point_both_variants_have() -> None:
    runs, medians = _runs(points=3, shift=1.0)

    # LIA lacks point 2, OLIA point 0: point 1 is the only one they share, LIA's second.
    def shared_only(frame: pd.DataFrame) -> pd.DataFrame:
        lia_2 = (frame["cc"] == "lia") & (frame["point"] == 2)
        olia_0 = (frame["cc"] == "olia") & (frame["point"] == 0)
        kept = frame[~(lia_2 | olia_0)]
        kept.attrs = dict(frame.attrs)
        return kept

    runs, medians = shared_only(runs), shared_only(medians)
    row = compare_variants(medians, "m", runs=runs).iloc[0]
    at_1 = runs[runs["point"] == 1]
    a = at_1.loc[at_1["cc"] == "lia", "m"].to_numpy()
    b = at_1.loc[at_1["cc"] == "olia", "m"].to_numpy()
    assert (row["points"], row["basis"]) == (1, "5 + 5 runs")
    assert row["median_difference"] == pytest.approx(float(np.median(np.subtract.outer(b, a))))


def _two_path(cc: str, seed: int, loss: float) -> dict[str, object]:
    """Two paths behind 5-packet buffers, where LIA and OLIA fill them differently (deep
    buffers let either fill both links)."""
    queue = {"kind": "droptail", "packets": 5}
    return {
        "duration_s": 5.0,
        "seed": seed,
        "links": [
            {"id": "a", "capacity_mbps": 10.0, "delay_ms": 10.0, "loss": loss, "queue": queue},
            {"id": "b", "capacity_mbps": 4.0, "delay_ms": 40.0, "queue": queue},
        ],
        "flows": [{"id": "m", "protocol": "mptcp", "cc": cc, "paths": [["a"], ["b"]]}],
    }


def _replications(loss: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Five replications (seeds) of LIA and of OLIA at one point."""
    return _frames(
        [
            (0, cc, seed, sim.run(_two_path(cc, seed, loss)).flows[0].goodput_mbps)
            for cc in ("lia", "olia")
            for seed in range(1, 6)
        ]
    )


def test_replications_a_deterministic_scenario_repeats_are_one_observation() -> None:
    """Without random loss nothing in this scenario draws a random number that matters: every
    seed gives the same run, and five copies are one observation, not five. The rank-sum test
    would call five equal values against five others significant (p = 0.004); the comparison
    gives the exact difference and no test. With random loss the seeds differ and it tests."""
    runs, medians = _replications(loss=0.0)
    assert runs.groupby("cc")["m"].nunique().tolist() == [1, 1]
    lia, olia = (runs.loc[runs["cc"] == cc, "m"].iloc[0] for cc in ("lia", "olia"))
    assert compare_samples([lia] * 5, [olia] * 5).p_value < 0.01  # what the copies would say
    row = compare_variants(medians, "m", higher_is_better=True, runs=runs).iloc[0]
    assert row["basis"] == "5 + 5 runs, all alike"
    assert row["median_difference"] == row["ci_low"] == row["ci_high"] == olia - lia != 0
    assert math.isnan(row["p_value"]) and math.isnan(row["p_adjusted"])
    side = "higher (better)" if olia > lia else "lower (worse)"
    assert row["verdict"] == f"olia {side}, exactly (all alike)"
    same = runs.assign(m=runs["m"].where(runs["cc"] == "lia", lia))
    row = compare_variants(medians.assign(m=lia), "m", runs=same).iloc[0]
    assert row["verdict"] == "no difference (all alike)"

    runs, medians = _replications(loss=0.01)
    assert runs.groupby("cc")["m"].nunique().tolist() == [5, 5]
    row = compare_variants(medians, "m", runs=runs).iloc[0]
    assert row["basis"] == "5 + 5 runs" and 0 < row["p_value"] <= 1


def test_one_run_a_side_is_too_few_not_all_alike() -> None:
    """A single replication shows nothing of whether the scenario is random: two variants of
    one run each have too few runs, however their values compare; two equal runs each are
    the least that shows the seeds changed nothing."""
    runs, medians = _frames([(0, "lia", 0, 1.0), (0, "olia", 0, 2.0)])
    row = compare_variants(medians, "m", runs=runs).iloc[0]
    assert row["basis"] == "1 + 1 runs" and row["verdict"] == "too few runs"
    runs, medians = _frames(
        [(0, "lia", r, 1.0) for r in range(2)] + [(0, "olia", r, 2.0) for r in range(2)]
    )
    row = compare_variants(medians, "m", runs=runs).iloc[0]
    assert (
        row["basis"] == "2 + 2 runs, all alike"
        and row["verdict"] == "olia higher, exactly (all alike)"
    )
