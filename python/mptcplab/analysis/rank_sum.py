"""Two independent samples compared by ranks: the Wilcoxon–Mann–Whitney rank-sum test, the
Hodges–Lehmann estimate of the shift between them and its distribution-free interval
(Hollander, Wolfe & Chicken, *Nonparametric Statistical Methods*, 3rd ed., §4.1–4.3).

Used where two variants share a single design point (a reproduction's settings), so that the
point-by-point comparison of :mod:`mptcplab.analysis.paired` has nothing to pair: the
replications of each variant at that point are then the two samples.

With U the number of pairs (a_i, b_j) where b_j > a_i, the shift estimate is the median of the
m·n differences b_j − a_i, and the interval runs from the k-th smallest to the k-th largest of
them, k the largest integer with P(U ≤ k − 1) ≤ α/2 under the null hypothesis (no ties). The
interval excludes 0 exactly where the exact two-sided test rejects at level α. Five runs a side
give a 95 % interval (P(U ≤ 2) = 4/252); three do not (P(U = 0) = 1/20).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from mptcplab.analysis._checks import confidence_level
from mptcplab.analysis.unfinished import outer_differences

__all__ = ["RankSumComparison", "compare_samples", "null_cdf"]


def null_cdf(m: int, n: int) -> np.ndarray:
    """P(U ≤ u) for u = 0 … m·n under the null hypothesis, samples of sizes ``m`` and ``n``
    without ties (every ordering of the m + n values equally likely)."""
    # prob[j][u] for i a's and j b's: the last value of an ordering is an a with probability
    # i / (i + j) (it precedes no b: U unchanged) or a b (it follows all i a's: U grows by i).
    prob = [np.ones(1) for _ in range(n + 1)]
    for i in range(1, m + 1):
        row = [np.ones(1)]
        for j in range(1, n + 1):
            ways = np.zeros(i * j + 1)
            last_a, last_b = prob[j], row[j - 1]
            ways[: last_a.size] += last_a * (i / (i + j))
            ways[i : i + last_b.size] += last_b * (j / (i + j))
            row.append(ways)
        prob = row
    return np.minimum(np.cumsum(prob[n]), 1.0)


@dataclass(frozen=True)
class RankSumComparison:
    """Sample ``b`` against sample ``a``: ``shift`` (Hodges–Lehmann, b − a) with its interval
    ``low`` … ``high`` (NaNs when the samples are too small for one), ``b_higher_share``
    (U / (m·n), ties counted half) and the two-sided ``p_value``."""

    shift: float
    low: float
    high: float
    b_higher_share: float
    p_value: float


def compare_samples(
    a: Sequence[float], b: Sequence[float], confidence: float = 0.95
) -> RankSumComparison:
    """Compare two independent samples (NaNs dropped); each needs at least one value.
    ``confidence``: the interval's coverage, in (0, 1)."""
    alpha = 1.0 - confidence_level(confidence)
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if x.size == 0 or y.size == 0:
        raise ValueError("each sample needs a value")
    differences = np.sort(outer_differences(y, x))
    share = float(((differences > 0).sum() + 0.5 * (differences == 0).sum()) / differences.size)
    cdf = null_cdf(x.size, y.size)
    # A hair above α/2: a tail probability equal to it must not be lost to rounding.
    k = int(np.searchsorted(cdf, alpha / 2 * (1 + 1e-9), side="right"))
    low = high = float("nan")
    if k > 0:
        low, high = float(differences[k - 1]), float(differences[differences.size - k])
    if np.unique(np.concatenate([x, y])).size == 1:
        p = 1.0
    else:
        # Exact where there are no ties; with ties the exact null distribution does not hold.
        tied = np.unique(np.concatenate([x, y])).size < x.size + y.size
        method = "asymptotic" if tied else "exact"
        p = float(stats.mannwhitneyu(y, x, alternative="two-sided", method=method).pvalue)
    return RankSumComparison(float(np.median(differences)), low, high, share, p)
