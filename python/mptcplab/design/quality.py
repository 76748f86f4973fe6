"""Space-filling and uniformity measures of a design in [0, 1]^d (spec ``algorithms.md`` §4.5).

Sources:
- Morris & Mitchell, "Exploratory designs for computational experiments", J. Statist. Planning
  and Inference 43 (1995) 381-402: the phi_p criterion and the maximin distance.
- Gunzburger & Burkardt, "Uniformity measures for point samples in hypercubes" (2004), as used by
  DiceDesign: coverage and mesh ratio (here over all n points; DiceDesign's meshRatio skips the
  last one).
- Franco, Vasseur, Corre, Sergent, "Minimum Spanning Tree: a new approach to assess the quality of
  the design of computer experiments", Chemometrics and Intelligent Laboratory Systems 97 (2009)
  164-169. DiceDesign builds the tree with Prim's algorithm (R. C. Prim, "Shortest connection
  networks and some generalizations", Bell System Tech. J. 36 (1957) 1389-1401), as this module
  does; all minimum spanning trees of a graph share the same multiset of edge lengths, so any
  of them gives the same criteria (the tests hold these to scipy's ``minimum_spanning_tree``).
  The spread is the sample standard deviation of the n - 1 edge lengths, as in DiceDesign's
  mstCriteria.
- F. J. Hickernell, "A generalized discrepancy and quadrature error bound", Math. Comp. 67 (1998)
  299-322: centred, wrap-around and star L2 discrepancies. Reported as the discrepancy itself
  (the square root of the spec's squared formulas), as DiceDesign's discrepancyCriteria.
  ``scipy.stats.qmc.discrepancy`` returns CD and WD squared and L2-star unsquared; the tests check
  all three against the formulas.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy.spatial.distance import pdist, squareform
from scipy.stats import qmc

from ._common import MAX_POINTS, as_unit_points, check_flag, check_real

DEFAULT_P = 50

# Measures where a larger value is better; the "worst" 2-D projection is then the minimum.
_LARGER_IS_BETTER = {"mindist", "mst_mean"}
PROJECTED_MEASURES = (
    "mindist",
    "phi_p",
    "coverage",
    "mesh_ratio",
    "mst_mean",
    "mst_std",
    "cd2",
    "wd2",
    "l2_star",
)


def _points(points: npt.ArrayLike, *, minimum: int = 2) -> np.ndarray:
    arr = as_unit_points(points)
    if arr.shape[0] < minimum:
        raise ValueError(
            f"points: this measure needs at least {minimum} points, got {arr.shape[0]}"
        )
    if arr.shape[0] > MAX_POINTS:
        raise ValueError(
            f"points: at most {MAX_POINTS} points, got {arr.shape[0]} (the measures compare "
            "every pair of points)"
        )
    return arr


def _exponent(p: object) -> float:
    value = check_real("p", p)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"p: expected a positive exponent, got {p!r}")
    return value


def nearest_neighbour_distances(points: npt.ArrayLike) -> np.ndarray:
    """gamma_i: Euclidean distance from each point to its nearest other point."""
    dm = squareform(pdist(_points(points)))
    np.fill_diagonal(dm, np.inf)
    return dm.min(axis=1)


def mindist(points: npt.ArrayLike) -> float:
    """Smallest Euclidean distance between two points (maximin criterion; larger is better)."""
    return float(pdist(_points(points)).min())


def phi_p(points: npt.ArrayLike, p: float = DEFAULT_P) -> float:
    """Morris-Mitchell ``(sum_{i<j} d_ij^-p)^(1/p)`` (smaller is better; ~1/mindist for large p)."""
    return _phi_p_from_distances(pdist(_points(points)), _exponent(p))


def _phi_p_from_distances(distances: np.ndarray, p: float) -> float:
    # Factor out the smallest distance so d^-p cannot overflow for p = 50.
    dmin = float(distances.min())
    if dmin == 0.0:
        return float("inf")
    return float((np.sum((dmin / distances) ** p)) ** (1.0 / p) / dmin)


def coverage(points: npt.ArrayLike) -> float:
    """``(1/mean gamma) * sqrt(mean (gamma_i - mean gamma)^2)``: 0 for a regular grid."""
    return _coverage(nearest_neighbour_distances(points))


def _coverage(gamma: np.ndarray) -> float:
    mean = gamma.mean()
    if mean == 0.0:
        return float("nan")
    return float(np.sqrt(np.mean((gamma - mean) ** 2)) / mean)


def mesh_ratio(points: npt.ArrayLike) -> float:
    """``max gamma_i / min gamma_i`` over all n points: 1 for a regular grid."""
    return _mesh_ratio(nearest_neighbour_distances(points))


def _mesh_ratio(gamma: np.ndarray) -> float:
    lo = gamma.min()
    return float("inf") if lo == 0.0 else float(gamma.max() / lo)


def mst_criteria(points: npt.ArrayLike) -> tuple[float, float]:
    """Mean and sample standard deviation of the Euclidean minimum-spanning-tree edge lengths."""
    return _mst_from_matrix(squareform(pdist(_points(points))))


def _mst_from_matrix(dm: np.ndarray) -> tuple[float, float]:
    edges = _prim_edge_lengths(dm)
    std = float(np.std(edges, ddof=1)) if edges.size > 1 else 0.0
    return float(edges.mean()), std


def _prim_edge_lengths(dm: np.ndarray) -> np.ndarray:
    """Edge lengths of a minimum spanning tree of the complete graph whose distances are ``dm``,
    by Prim's algorithm in its dense form: each step joins the point nearest the tree and lowers
    the others' distances to it by that point's row, O(n^2) in all. scipy's
    ``minimum_spanning_tree`` works on a sparse graph and, handed the dense matrix of a design,
    took 12 s for 5,000 points where this takes a fraction of a second (a design's quality
    measures it once in full and once per 2-D projection); it also reads a zero distance as no
    edge at all, which coincident points have."""
    remaining = np.arange(1, dm.shape[0])
    to_tree = dm[0, 1:].copy()  # each remaining point's distance to the tree
    edges = np.empty(dm.shape[0] - 1)
    for k in range(edges.size):
        nearest = int(np.argmin(to_tree))
        edges[k] = to_tree[nearest]
        joined = remaining[nearest]
        remaining = np.delete(remaining, nearest)
        to_tree = np.delete(to_tree, nearest)
        np.minimum(to_tree, dm[joined, remaining], out=to_tree)
    return edges


def centered_l2_discrepancy(points: npt.ArrayLike) -> float:
    """Hickernell's centred L2 discrepancy CD2 (not squared)."""
    sq = float(qmc.discrepancy(_points(points, minimum=1), method="CD"))
    return float(np.sqrt(max(sq, 0.0)))


def wraparound_l2_discrepancy(points: npt.ArrayLike) -> float:
    """Hickernell's wrap-around L2 discrepancy W2 (not squared)."""
    sq = float(qmc.discrepancy(_points(points, minimum=1), method="WD"))
    return float(np.sqrt(max(sq, 0.0)))


def l2_star_discrepancy(points: npt.ArrayLike) -> float:
    """L2-star discrepancy D*2 (not squared)."""
    return float(qmc.discrepancy(_points(points, minimum=1), method="L2-star"))


def _measures(points: np.ndarray, p: float) -> dict[str, float]:
    distances = pdist(points)
    dm = squareform(distances)
    np.fill_diagonal(dm, np.inf)
    gamma = dm.min(axis=1)
    np.fill_diagonal(dm, 0.0)
    mst_mean, mst_std = _mst_from_matrix(dm)
    return {
        "mindist": float(distances.min()),
        "phi_p": _phi_p_from_distances(distances, p),
        "coverage": _coverage(gamma),
        "mesh_ratio": _mesh_ratio(gamma),
        "mst_mean": mst_mean,
        "mst_std": mst_std,
        "cd2": centered_l2_discrepancy(points),
        "wd2": wraparound_l2_discrepancy(points),
        "l2_star": l2_star_discrepancy(points),
    }


def _summaries(values: list[float], *, larger_is_better: bool) -> tuple[float, float]:
    arr = np.asarray(values, dtype=float)
    reduce: Callable[[np.ndarray], float] = np.min if larger_is_better else np.max
    with np.errstate(invalid="ignore"):
        return float(reduce(arr)), float(np.mean(arr))


def quality(
    points: npt.ArrayLike,
    *,
    projections: bool = True,
    p: float = DEFAULT_P,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, float]:
    """Quality report of a design in [0, 1]^d (spec §4.5).

    Keys: ``n``, ``d``, ``mindist``, ``phi_p``, ``coverage``, ``mesh_ratio``, ``mst_mean``,
    ``mst_std``, ``cd2``, ``wd2``, ``l2_star``. With ``projections=True`` also
    ``<measure>_2d_worst`` and ``<measure>_2d_mean`` over all d(d-1)/2 two-dimensional projections
    ("worst" is the minimum for mindist and mst_mean, the maximum otherwise; NaN when d = 1).
    Coincident points give mindist 0, phi_p and mesh_ratio infinite. ``progress``, when given, is
    told (measured, to measure) after the full design and after each projection: each costs
    O(n^2), and thousands of points in tens of dimensions take minutes or more.
    """
    arr = _points(points)
    p = _exponent(p)
    projections = check_flag("projections", projections)
    n, d = arr.shape
    report: dict[str, float] = {"n": n, "d": d}
    pairs = list(itertools.combinations(range(d), 2)) if projections else []
    report.update(_measures(arr, p))
    if progress is not None:
        progress(1, 1 + len(pairs))
    if projections:
        per_pair = []
        for k, pair in enumerate(pairs):
            per_pair.append(_measures(arr[:, list(pair)], p))
            if progress is not None:
                progress(k + 2, 1 + len(pairs))
        for key in PROJECTED_MEASURES:
            if per_pair:
                worst, mean = _summaries(
                    [m[key] for m in per_pair], larger_is_better=key in _LARGER_IS_BETTER
                )
            else:
                worst = mean = float("nan")
            report[f"{key}_2d_worst"] = worst
            report[f"{key}_2d_mean"] = mean
    return report
