"""A metric's per-point medians as a heat map over the two factors that explain most of it.

Space-filling designs do not put their points on a grid, so each factor's range is cut into
bins holding about equal numbers of points (quantile bins; a factor that takes a few values,
each several times as in a factorial design, keeps one cell per value) and every cell shows
the median of the point medians that fall into it. The pair of factors drawn is the one whose
cells explain the largest share of the metric's variance within each variant: the η² of a
one-way analysis of variance over the cells, adjusted like Kelley's ε² (T. L. Kelley, "An
unbiased correlation ratio measure", PNAS 21(9), 1935) so that a factor cut into more cells
gains nothing from the extra cells alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mptcplab.analysis._checks import finite_numbers, listed, require_columns, unknown_names

# At least this many points per cell on average before a factor is cut more finely.
POINTS_PER_CELL = 4
MAX_BINS = 8


@dataclass(frozen=True)
class HeatGrid:
    """Medians of ``metric`` over cells of ``x`` × ``y``, one array per variant (rows are y
    cells from low to high, columns x cells); ``nan`` where no point fell. ``explained`` is
    ``nan`` when the pair is the only one and its cells hold one point each (a two-factor
    grid without replication), or the metric does not vary within any variant: nothing to
    choose, nothing to estimate it from."""

    metric: str
    x: str
    y: str
    x_labels: list[str]
    y_labels: list[str]
    values: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]
    explained: float


def bins_per_factor(points: int) -> int:
    """Bins per axis for a variant with ``points`` points: about POINTS_PER_CELL per cell."""
    return max(2, min(MAX_BINS, math.isqrt(max(points, 1) // POINTS_PER_CELL)))


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _cells(values: pd.Series, bins: int, per_variant: int) -> tuple[pd.Series, list[str]]:
    """Cell index of each value and the cells' labels, from low to high. Every variant runs
    the same points, so a value counts as repeated when it recurs within one variant."""
    distinct = np.sort(values.dropna().unique())
    levels = distinct.size <= MAX_BINS and per_variant >= 2 * distinct.size
    if distinct.size <= bins or levels:
        index = pd.Series(np.searchsorted(distinct, values), index=values.index)
        return index, [_fmt(v) for v in distinct]
    cut, edges = pd.qcut(values, bins, labels=False, retbins=True, duplicates="drop")
    labels = [f"{_fmt(lo)}–{_fmt(hi)}" for lo, hi in itertools.pairwise(edges)]
    return cut.astype(int), labels


def _adjusted_eta_squared(frame: pd.DataFrame, metric: str, cells: list[str]) -> float:
    """Share of the within-variant variance of ``metric`` explained by ``cells``, adjusted
    for the number of cells; ``nan`` when there are too few points to say."""
    within_variant = frame.groupby("variant", sort=False)[metric]
    total = float(((frame[metric] - within_variant.transform("mean")) ** 2).sum())
    by_cell = frame.groupby(["variant", *cells], sort=False)[metric]
    within_cell = float(((frame[metric] - by_cell.transform("mean")) ** 2).sum())
    n = len(frame)
    groups = frame["variant"].nunique()
    cell_count = by_cell.ngroups
    if total <= 0 or n <= cell_count:
        return math.nan
    return 1.0 - (within_cell / (n - cell_count)) / (total / (n - groups))


def heat_grid(
    medians: pd.DataFrame, metric: str, factors: Sequence[str], variants: Sequence[str]
) -> HeatGrid | None:
    """The heat map of ``metric`` over the pair of ``factors`` that explains most of it, one
    grid per variant of ``variants`` (a variant without a value of the metric gets an empty
    grid).

    ``factors`` are quantitative: columns of finite numbers. Points without a value of the
    metric (NaN) are left out. An infinite value (a time that ran past its run, a log gain of a
    run that delivered nothing) counts in its cell's median, as the tables count it, and a
    cell whose median it makes infinite holds ±inf; the choice of the pair weighs the finite
    values only (a variance needs magnitudes). None when fewer than two of
    ``factors`` vary over the points that have a value, or, with three factors or more, when
    no pair's cells tell anything apart: the metric does not vary within any variant, or the
    cells hold one point each (nothing to compare pairs by)."""
    factors = listed(factors, "factors", "factor names")
    variants = listed(variants, "variants", "variant labels")
    require_columns(medians.columns, [metric], "metric", "medians")
    require_columns(medians.columns, ["variant"], "medians", "medians")
    require_columns(medians.columns, factors, "factors", "medians")
    finite_numbers(medians[metric], "metric", unfinished=True, stalled=True)
    unknown_names(variants, medians["variant"], "variants", "variant")
    frame = medians.dropna(subset=[metric])
    for factor in factors:
        finite_numbers(frame[factor], "factors")
        missing = int(frame[factor].isna().sum())
        if missing:
            raise ValueError(
                f"factors: column {factor!r} has no value (NaN) at {missing} of the points with "
                "a value of the metric; each needs its factor values to have a cell"
            )
    factors = [f for f in factors if frame[f].nunique() > 1]
    if len(factors) < 2 or frame.empty:
        return None
    per_variant = int(frame.groupby("variant").size().min())
    bins = bins_per_factor(per_variant)
    cells: dict[str, pd.Series] = {}
    labels: dict[str, list[str]] = {}
    for factor in factors:
        cells[factor], labels[factor] = _cells(frame[factor], bins, per_variant)
    scored = frame[["variant", metric]].assign(**{f"_cell_{f}": cells[f] for f in factors})
    finite = scored[np.isfinite(scored[metric])]
    pairs = list(itertools.combinations(factors, 2))
    best: tuple[float, str, str] | None = None
    for x, y in pairs:
        explained = _adjusted_eta_squared(finite, metric, [f"_cell_{x}", f"_cell_{y}"])
        if len(pairs) == 1 or (math.isfinite(explained) and (best is None or explained > best[0])):
            best = (explained, x, y)
    if best is None:
        return None
    explained, x, y = best
    values: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    shape = (len(labels[y]), len(labels[x]))
    for variant in variants:
        mine = scored[scored["variant"] == variant]
        grid = np.full(shape, np.nan)
        count = np.zeros(shape, dtype=int)
        for (cy, cx), group in mine.groupby([f"_cell_{y}", f"_cell_{x}"]):
            grid[int(cy), int(cx)] = float(group[metric].median())
            count[int(cy), int(cx)] = len(group)
        values[variant] = grid
        counts[variant] = count
    return HeatGrid(metric, x, y, labels[x], labels[y], values, counts, explained)
