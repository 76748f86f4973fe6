"""Design-quality measures against their formulas (spec algorithms.md §4.5, §6.4)."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

from mptcplab.design import (
    centered_l2_discrepancy,
    coverage,
    full_factorial,
    l2_star_discrepancy,
    mesh_ratio,
    mindist,
    mst_criteria,
    phi_p,
    quality,
    wraparound_l2_discrepancy,
)

# --- the spec's squared discrepancy formulas, written out with explicit loops ------------------


def cd2_squared(x: np.ndarray) -> float:
    n, d = x.shape
    s1 = sum(
        math.prod(1 + 0.5 * abs(x[i, k] - 0.5) - 0.5 * abs(x[i, k] - 0.5) ** 2 for k in range(d))
        for i in range(n)
    )
    s2 = sum(
        math.prod(
            1 + 0.5 * abs(x[i, k] - 0.5) + 0.5 * abs(x[j, k] - 0.5) - 0.5 * abs(x[i, k] - x[j, k])
            for k in range(d)
        )
        for i in range(n)
        for j in range(n)
    )
    return (13 / 12) ** d - 2 / n * s1 + s2 / n**2


def wd2_squared(x: np.ndarray) -> float:
    n, d = x.shape
    s = sum(
        math.prod(1.5 - abs(x[i, k] - x[j, k]) * (1 - abs(x[i, k] - x[j, k])) for k in range(d))
        for i in range(n)
        for j in range(n)
    )
    return -((4 / 3) ** d) + s / n**2


def l2_star_squared(x: np.ndarray) -> float:
    n, d = x.shape
    s1 = sum(math.prod(1 - x[i, k] ** 2 for k in range(d)) for i in range(n))
    s2 = sum(
        math.prod(1 - max(x[i, k], x[j, k]) for k in range(d)) for i in range(n) for j in range(n)
    )
    return 3.0 ** (-d) - 2 ** (1 - d) / n * s1 + s2 / n**2


@pytest.mark.parametrize(("n", "d", "seed"), [(10, 2, 0), (10, 2, 1), (7, 5, 2), (25, 3, 3)])
def test_discrepancies_match_the_spec_formulas(n: int, d: int, seed: int) -> None:
    x = np.random.default_rng(seed).random((n, d))
    assert centered_l2_discrepancy(x) ** 2 == pytest.approx(cd2_squared(x), abs=1e-12)
    assert wraparound_l2_discrepancy(x) ** 2 == pytest.approx(wd2_squared(x), abs=1e-12)
    assert l2_star_discrepancy(x) ** 2 == pytest.approx(l2_star_squared(x), abs=1e-12)


def test_discrepancies_of_one_centre_point_in_one_dimension() -> None:
    # CD2^2 = 13/12 - 2 (1 + 0 - 0) + (1 + 0 + 0 - 0) = 1/12
    # W2^2  = -4/3 + (3/2 - 0) = 1/6
    # D*^2  = 1/3 - 1 * (1 - 1/4) + (1 - 1/2) = 1/12
    x = np.array([[0.5]])
    assert centered_l2_discrepancy(x) == pytest.approx(math.sqrt(1 / 12), abs=1e-12)
    assert wraparound_l2_discrepancy(x) == pytest.approx(math.sqrt(1 / 6), abs=1e-12)
    assert l2_star_discrepancy(x) == pytest.approx(math.sqrt(1 / 12), abs=1e-12)


def test_regular_grid_has_zero_coverage_and_unit_mesh_ratio() -> None:
    for levels, d in [(5, 2), (4, 3), (9, 1)]:
        grid = full_factorial(levels, d=d)
        assert coverage(grid) == pytest.approx(0.0, abs=1e-12)
        assert mesh_ratio(grid) == pytest.approx(1.0, abs=1e-12)


def test_coverage_and_mesh_ratio_by_hand() -> None:
    # gamma = (0.25, 0.25, 0.75): mean 5/12, deviations (-1/6, -1/6, 1/3), variance 1/18.
    # The last point has the largest gamma, so skipping it (DiceDesign's loop) would give 1.
    x = np.array([[0.0], [0.25], [1.0]])
    assert coverage(x) == pytest.approx(math.sqrt(1 / 18) / (5 / 12), rel=1e-12)
    assert mesh_ratio(x) == pytest.approx(3.0, rel=1e-12)


def test_mindist_and_phi_p_by_hand() -> None:
    x = np.array([[0.0], [0.5], [1.0]])
    assert mindist(x) == pytest.approx(0.5)
    for p in (1.0, 2.0, 50.0):
        assert phi_p(x, p) == pytest.approx((2 * 0.5 ** (-p) + 1.0) ** (1 / p), rel=1e-12)
    two = np.array([[0.1, 0.1], [0.4, 0.5]])
    assert phi_p(two) == pytest.approx(1 / 0.5, rel=1e-12)


def test_phi_p_does_not_overflow_for_close_points() -> None:
    x = np.array([[0.0, 0.0], [1e-9, 0.0], [1.0, 1.0]])
    assert phi_p(x) == pytest.approx(1e9, rel=1e-9)


def test_mst_criteria_by_hand() -> None:
    line = np.array([[0.0], [0.1], [0.3], [0.6], [1.0]])
    mean, std = mst_criteria(line)
    edges = [0.1, 0.2, 0.3, 0.4]
    assert mean == pytest.approx(statistics.mean(edges), rel=1e-12)
    assert std == pytest.approx(statistics.stdev(edges), rel=1e-12)
    # Four corners and the centre: the tree is the four spokes of length sqrt(2)/2.
    star = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.5]], dtype=float)
    mean, std = mst_criteria(star)
    assert mean == pytest.approx(math.sqrt(2) / 2, rel=1e-12)
    assert std == pytest.approx(0.0, abs=1e-12)
    # Coincident points are joined by a zero-length edge, not left unconnected.
    dup = np.array([[0.2, 0.2], [0.2, 0.2], [0.2, 0.7]])
    assert mst_criteria(dup) == pytest.approx((0.25, statistics.stdev([0.0, 0.5])))


@pytest.mark.parametrize(
    "points",
    [
        np.random.default_rng(2).random((300, 2)),
        np.random.default_rng(3).random((200, 6)),
        # A grid: many equal distances, so many trees of the same edge lengths.
        np.array([[i / 9, j / 9] for i in range(10) for j in range(10)]),
    ],
    ids=["random-2d", "random-6d", "grid"],
)
def test_mst_edges_are_those_of_scipys_tree(points: np.ndarray) -> None:
    from scipy.sparse.csgraph import minimum_spanning_tree
    from scipy.spatial.distance import pdist, squareform

    dm = squareform(pdist(points))
    # scipy reads a zero entry as no edge; these sets have no coincident points.
    tree = minimum_spanning_tree(dm).tocoo()
    reference = np.sort(dm[tree.row, tree.col])
    mean, std = mst_criteria(points)
    assert mean == pytest.approx(reference.mean(), rel=1e-12)
    assert std == pytest.approx(reference.std(ddof=1), rel=1e-12)


def test_quality_report_and_its_projections() -> None:
    x = np.random.default_rng(8).random((30, 3))
    q = quality(x)
    assert (q["n"], q["d"]) == (30, 3)
    assert q["mindist"] == pytest.approx(mindist(x))
    assert q["phi_p"] == pytest.approx(phi_p(x))
    assert q["coverage"] == pytest.approx(coverage(x))
    assert q["mesh_ratio"] == pytest.approx(mesh_ratio(x))
    assert (q["mst_mean"], q["mst_std"]) == pytest.approx(mst_criteria(x))
    assert q["cd2"] == pytest.approx(math.sqrt(cd2_squared(x)), abs=1e-12)
    assert q["wd2"] == pytest.approx(math.sqrt(wd2_squared(x)), abs=1e-12)
    assert q["l2_star"] == pytest.approx(math.sqrt(l2_star_squared(x)), abs=1e-12)
    pairs = [x[:, list(p)] for p in itertools.combinations(range(3), 2)]
    mind = [mindist(p) for p in pairs]
    assert q["mindist_2d_worst"] == pytest.approx(min(mind))
    assert q["mindist_2d_mean"] == pytest.approx(sum(mind) / 3)
    cds = [math.sqrt(cd2_squared(p)) for p in pairs]
    assert q["cd2_2d_worst"] == pytest.approx(max(cds))
    assert q["cd2_2d_mean"] == pytest.approx(sum(cds) / 3)
    phis = [phi_p(p) for p in pairs]
    assert q["phi_p_2d_worst"] == pytest.approx(max(phis))


def test_projection_with_coincident_points_is_reported_as_worst() -> None:
    # Columns 0 and 1 repeat the same pair twice: that projection has two coincident points.
    x = np.array([[0.1, 0.2, 0.1], [0.1, 0.2, 0.9], [0.7, 0.8, 0.5]])
    q = quality(x)
    assert q["mindist_2d_worst"] == 0.0
    assert q["phi_p_2d_worst"] == math.inf
    assert q["mesh_ratio_2d_worst"] == math.inf


def test_quality_without_projections_and_in_one_dimension() -> None:
    x = np.random.default_rng(1).random((12, 4))
    assert not any(key.endswith("_2d_mean") for key in quality(x, projections=False))
    one_d = quality(np.linspace(0, 1, 6)[:, None])
    assert math.isnan(one_d["mindist_2d_worst"])


@pytest.mark.parametrize(
    ("points", "message"),
    [
        (np.array([[0.2, 1.3]]), "coordinate 1"),
        (np.array([[0.2, 0.3]]), "at least 2 points"),
        (np.array([0.2, 0.3]), "2-D"),
        (np.array([[0.2, np.nan], [0.1, 0.1]]), "not finite"),
    ],
)
def test_bad_points_are_refused_clearly(points: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        quality(points)


@pytest.mark.parametrize(("d", "projections"), [(4, True), (4, False), (1, True)])
def test_quality_tells_each_measured_projection(d: int, projections: bool) -> None:
    calls: list[tuple[int, int]] = []
    x = np.random.default_rng(1).random((12, d))
    told = quality(x, projections=projections, progress=lambda k, n: calls.append((k, n)))
    untold = quality(x, projections=projections)
    assert told.keys() == untold.keys()
    assert all(
        told[k] == untold[k] or (told[k] != told[k] and untold[k] != untold[k]) for k in told
    )
    total = 1 + (d * (d - 1) // 2 if projections else 0)
    assert calls == [(k, total) for k in range(1, total + 1)]
