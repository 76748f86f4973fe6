"""Variants compared point by point: is one level of a qualitative factor (OLIA against LIA, an
auto-tuned buffer against a fixed one) better than another, with a test, not only by eye?

Every variant of a campaign runs at the same design points with the same seeds, so two variants
are paired samples: the difference of their per-point medians removes the effect of the point
(capacity, delay, loss...) and leaves that of the level. For each qualitative factor, each pair
of its levels is compared with the other factors' levels held fixed, over the points where both
variants have a median:

- the median of the differences (B − A), with its distribution-free confidence interval: the
  order statistics d(k) and d(n−k+1) of the sorted differences, k the largest integer with
  P(Bin(n, ½) ≤ k − 1) ≤ α/2 (the interval for the median of the sign test; Hollander, Wolfe &
  Chicken, *Nonparametric Statistical Methods*, 3rd ed., §3.6). It needs n ≥ 6 at 95 %;
- the share of points where B is higher;
- the two-sided sign test of a zero median difference (exact binomial, zero differences
  dropped): the test that goes with the interval, which excludes 0 where the test rejects at
  the same level (up to zero differences). It assumes nothing of the differences' distribution,
  not even symmetry, which a metric bounded at one end (Jain's index near 1) does not have;
- the p-values of one metric's comparisons adjusted together by Benjamini–Hochberg (they are
  many when the factors are).

Medians over replications are compared, as everywhere in the report, with one exception: two
variants that share a single point (a reproduction's settings, where the factors are all
qualitative) have nothing to pair. Given the runs, their replications at that point are then
compared as two independent samples (:mod:`mptcplab.analysis.rank_sum`: the rank-sum test, the
Hodges–Lehmann shift and its interval; ``basis`` says which). Replications of the two variants
share seeds; when that makes them alike, the rank-sum test only becomes more cautious. When
every replication of each variant, two or more, gave the same value (a deterministic scenario:
no random loss, RED or jitter draws anything that matters there), they are one observation each, not
independent samples, and a rank-sum test over them would find significance in copies: the
difference is then exact, with no test (``basis`` ends in "all alike").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from mptcplab.analysis._checks import confidence_level, require_columns
from mptcplab.analysis.rank_sum import compare_samples
from mptcplab.analysis.unfinished import differences

__all__ = ["compare_variants", "median_interval", "paired_differences"]

#: How ``basis`` and the verdict say that every replication of both variants gave one value.
ALIKE = "all alike"

COLUMNS = [
    "factor",
    "a",
    "b",
    "with",
    "points",
    "basis",
    "median_a",
    "median_b",
    "median_difference",
    "ci_low",
    "ci_high",
    "b_higher_share",
    "p_value",
    "p_adjusted",
    "verdict",
]


def median_interval(differences: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval for the median of ``differences`` with coverage at least
    ``confidence`` (in (0, 1)); NaNs when there are too few values for one."""
    alpha = 1.0 - confidence_level(confidence)
    d = np.sort(np.asarray(differences, dtype=float))
    n = d.size
    # Largest k with P(B <= k - 1) <= alpha / 2, B ~ Bin(n, 1/2).
    k = 0
    while k < n and stats.binom.cdf(k, n, 0.5) <= alpha / 2:
        k += 1
    if k == 0:
        return float("nan"), float("nan")
    return float(d[k - 1]), float(d[n - k])


def _sign_test_p(differences: np.ndarray) -> float:
    nonzero = differences[differences != 0]
    if nonzero.size == 0:
        return 1.0
    return float(stats.binomtest(int((nonzero > 0).sum()), int(nonzero.size), 0.5).pvalue)


class _Pair(NamedTuple):
    """Two levels ``a`` and ``b`` of ``factor``, the other factors at ``held``, and their
    per-point medians indexed by (design, point)."""

    factor: str
    a: Any
    b: Any
    held: dict[str, Any]
    a_medians: pd.Series
    b_medians: pd.Series

    @property
    def with_text(self) -> str:
        return ", ".join(f"{name}={value}" for name, value in self.held.items())


def _levels(medians: pd.DataFrame, metric: str) -> list[str]:
    """The qualitative factors of ``medians`` (:func:`point_medians`' table), which must have
    the columns the comparison reads."""
    if "levels" not in medians.attrs:
        raise ValueError(
            "medians: expected the table point_medians returns, whose attrs['levels'] lists the "
            "qualitative factors; this one has no attrs['levels'] (some pandas operations, "
            "concat for one, drop attrs: set medians.attrs['levels'] = [...] again)"
        )
    levels = list(medians.attrs["levels"])
    missing = [lv for lv in levels if lv not in medians.columns]
    if missing:
        raise ValueError(
            f"medians: attrs['levels'] names {', '.join(map(repr, missing))}, which is not a "
            "column of the table"
        )
    require_columns(medians.columns, ["design", "point"], "medians", "medians")
    require_columns(medians.columns, [metric], "metric", "medians")
    return levels


def _pairs(medians: pd.DataFrame, metric: str) -> Iterator[_Pair]:
    """Every pair of levels of each qualitative factor, the other factors' levels held."""
    levels = _levels(medians, metric)
    for factor in levels:
        others = [lv for lv in levels if lv != factor]
        groups = medians.groupby(others, sort=False) if others else [((), medians)]
        for held, group in groups:  # a list of keys gives tuples (pandas >= 2)
            order = list(dict.fromkeys(group[factor]))
            by_level = {
                level: group[group[factor] == level].set_index(["design", "point"])[metric]
                for level in order
            }
            held_levels = dict(zip(others, held, strict=True))
            for level, series in by_level.items():
                repeated = series.index[series.index.duplicated()]
                if len(repeated):
                    at = ", ".join(f"{n}={v}" for n, v in {factor: level, **held_levels}.items())
                    raise ValueError(
                        f"medians: more than one row at (design, point) = {repeated[0]} for "
                        f"{at}; expected one per point and variant, as point_medians gives"
                    )
            for a, b in itertools.combinations(order, 2):
                yield _Pair(factor, a, b, held_levels, by_level[a], by_level[b])


def _common_points(a: pd.Series, b: pd.Series) -> pd.DataFrame:
    """Columns ``a`` and ``b``: the two levels' medians at the points where both have one."""
    return pd.concat({"a": a, "b": b}, axis=1, join="inner").dropna()


def paired_differences(medians: pd.DataFrame, metric: str) -> list[tuple[str, np.ndarray]]:
    """For each pair of levels that :func:`compare_variants` compares, a label ("olia − lia,
    buf=auto") and the differences b − a of ``metric``'s medians at the points both have: the
    distribution whose median the comparison tests (CoNEXT 2013 plots that of T_A − T_F)."""
    out = []
    for pair in _pairs(medians, metric):
        both = _common_points(pair.a_medians, pair.b_medians)
        label = f"{pair.b} − {pair.a}" + (f", {pair.with_text}" if pair.held else "")
        out.append((label, differences(both["b"], both["a"])))
    return out


def compare_variants(
    medians: pd.DataFrame,
    metric: str,
    *,
    confidence: float = 0.95,
    higher_is_better: bool | None = None,
    runs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per pair of levels of each qualitative factor (the other factors' levels fixed,
    named in ``with``), comparing ``metric``'s per-point medians (:func:`point_medians`) of
    level ``b`` against level ``a``. ``b_higher_share`` is the share of points where b is
    higher, ties counted half. ``verdict`` says which is higher where the adjusted p-value
    is below 1 − ``confidence``, and whether that is better when ``higher_is_better`` says.
    With ``runs`` (the table :func:`point_medians` took), a pair that shares one point only is
    compared over its replications there."""
    confidence_level(confidence)
    rows: list[dict[str, Any]] = []
    for pair in _pairs(medians, metric):
        compared = _compare(pair.a_medians, pair.b_medians, confidence)
        if runs is not None and compared["points"] == 1:
            shared = pair.a_medians.dropna().index.intersection(pair.b_medians.dropna().index)
            samples = [
                _replications(runs, metric, shared[0], pair.factor, level, pair.held)
                for level in (pair.a, pair.b)
            ]
            compared = _compare_replications(compared, *samples, confidence)
        rows.append(
            compared | {"factor": pair.factor, "a": pair.a, "b": pair.b, "with": pair.with_text}
        )
    if not rows:
        # Which factors there were, so that a caller can tell "none" from "none compared".
        empty = pd.DataFrame(columns=COLUMNS)
        empty.attrs["levels"] = list(medians.attrs.get("levels", []))
        return empty
    out = pd.DataFrame(rows)
    tested = out["p_value"].notna()
    out["p_adjusted"] = np.nan
    if tested.any():
        out.loc[tested, "p_adjusted"] = stats.false_discovery_control(
            out.loc[tested, "p_value"].to_numpy(), method="bh"
        )
    out["verdict"] = [_verdict(row, 1 - confidence, higher_is_better) for row in out.itertuples()]
    return out[COLUMNS]


def _compare(a: pd.Series, b: pd.Series, confidence: float) -> dict[str, Any]:
    both = _common_points(a, b)
    d = differences(both["b"], both["a"])
    if d.size == 0:
        return {"points": 0, "basis": "points"} | dict.fromkeys(COLUMNS[6:13], float("nan"))
    low, high = median_interval(d, confidence)
    return {
        "points": int(d.size),
        "basis": "points",
        "median_a": float(both["a"].median()),
        "median_b": float(both["b"].median()),
        "median_difference": float(np.median(d)),
        "ci_low": low,
        "ci_high": high,
        # Ties counted half, as the rank-sum basis counts them: above 0.5 exactly where more
        # points have b higher than lower, the direction the sign test (zeros dropped) judges.
        "b_higher_share": float(((d > 0).sum() + 0.5 * (d == 0).sum()) / d.size),
        "p_value": _sign_test_p(d),
    }


def _replications(
    runs: pd.DataFrame,
    metric: str,
    at: tuple[Any, Any],
    factor: str,
    level: Any,
    held: dict[str, Any],
) -> np.ndarray:
    """``metric`` in each finished replication of ``level`` (the other factors at ``held``) at
    the (design, point) ``at``."""
    design, point = at
    done = runs[(runs["role"] == "main") & (runs["status"] == "done")]
    chosen = (done["design"] == design) & (done["point"] == point) & (done[factor] == level)
    for name, value in held.items():
        chosen &= done[name] == value
    if metric not in done.columns:
        return np.array([])
    return done.loc[chosen, metric].dropna().to_numpy(dtype=float)


def _compare_replications(
    paired: dict[str, Any], a: np.ndarray, b: np.ndarray, confidence: float
) -> dict[str, Any]:
    """The pair's one point compared over its replications; as it was when either has none."""
    if a.size == 0 or b.size == 0:
        return paired
    # Two runs or more each: a single run shows nothing of whether the scenario is random.
    if min(a.size, b.size) >= 2 and np.unique(a).size == 1 and np.unique(b).size == 1:
        shift = float(differences(b[:1], a[:1])[0])
        return paired | {
            "basis": f"{a.size} + {b.size} runs, {ALIKE}",
            "median_difference": shift,
            "ci_low": shift,
            "ci_high": shift,
            "b_higher_share": 1.0 if shift > 0 else 0.0 if shift < 0 else 0.5,
            "p_value": float("nan"),
        }
    result = compare_samples(a, b, confidence)
    return paired | {
        "basis": f"{a.size} + {b.size} runs",
        "median_difference": result.shift,
        "ci_low": result.low,
        "ci_high": result.high,
        "b_higher_share": result.b_higher_share,
        "p_value": result.p_value,
    }


def _verdict(row: Any, alpha: float, higher_is_better: bool | None) -> str:
    if row.points == 0:
        return "no common points"
    alike = row.basis.endswith(ALIKE)
    if alike and row.median_difference == 0:
        return f"no difference ({ALIKE})"
    if np.isnan(row.ci_low):  # an infinite end is an interval (unfinished runs)
        return "too few points" if row.basis == "points" else "too few runs"
    if not alike and not row.p_adjusted < alpha:
        return "no difference shown"
    # The sign of the effect: the median difference, or where it is 0 whether more points (or
    # pairs of runs) have b higher than lower.
    higher = row.median_difference > 0 or (row.median_difference == 0 and row.b_higher_share > 0.5)
    text = f"{row.b} {'higher' if higher else 'lower'}"
    if higher_is_better is not None:
        text += " (better)" if higher == higher_is_better else " (worse)"
    return text + (f", exactly ({ALIKE})" if alike else "")
