"""Latin hypercubes and maximin LHS by simulated annealing (spec algorithms.md §4.5)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from mptcplab.design import anneal_maximin, lhs, maximin_lhs


def phi_p_formula(x: np.ndarray, p: float = 50.0) -> float:
    """Morris-Mitchell phi_p written out: (sum_{i<j} d_ij^-p)^(1/p)."""
    total = 0.0
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            total += float(np.linalg.norm(x[i] - x[j])) ** (-p)
    return total ** (1.0 / p)


def assert_latin(x: np.ndarray) -> None:
    n, d = x.shape
    assert np.all((x >= 0) & (x < 1))
    for k in range(d):
        strata = np.floor(x[:, k] * n).astype(int)
        assert sorted(strata.tolist()) == list(range(n)), f"column {k} is not one point per stratum"


@pytest.mark.parametrize(("d", "n"), [(1, 7), (2, 10), (5, 33), (8, 64)])
def test_random_lhs_has_one_point_per_stratum(d: int, n: int) -> None:
    assert_latin(lhs(d, n, rng=n))


def test_centred_lhs_sits_at_stratum_centres() -> None:
    x = lhs(3, 8, rng=0, centered=True)
    for k in range(3):
        assert sorted(x[:, k].tolist()) == [(i + 0.5) / 8 for i in range(8)]


@pytest.mark.parametrize(("d", "n"), [(2, 20), (4, 40), (6, 60)])
def test_annealing_keeps_lhs_and_lowers_phi_p(d: int, n: int) -> None:
    start = lhs(d, n, rng=10 + d)
    res = anneal_maximin(start, rng=20 + d)
    assert_latin(res.points)
    # Each column is a rearrangement of the starting column: only swaps happened.
    for k in range(d):
        assert np.array_equal(np.sort(res.points[:, k]), np.sort(start[:, k]))
    before, after = phi_p_formula(start), phi_p_formula(res.points)
    assert after < before
    assert res.phi == pytest.approx(after, rel=1e-10)
    assert res.phi_initial == pytest.approx(before, rel=1e-10)
    # The running phi_p (updated from two rows per step) must match a fresh computation.
    assert res.history.min() == pytest.approx(after, rel=1e-9)
    assert pdist(res.points).min() > pdist(start).min()


@pytest.mark.parametrize("profile", ["LINEAR", "GEOM_MORRIS"])
def test_other_temperature_profiles(profile: str) -> None:
    start = lhs(3, 25, rng=1)
    res = anneal_maximin(start, rng=2, profile=profile, it=400 if profile == "LINEAR" else 10)
    assert_latin(res.points)
    assert phi_p_formula(res.points) < phi_p_formula(start)


def test_geometric_schedule_runs_it_iterations() -> None:
    res = anneal_maximin(lhs(2, 12, rng=3), rng=4, it=150)
    assert res.iterations == 150
    assert res.history.shape == (150,)


def test_maximin_lhs_is_reproducible_and_seed_dependent() -> None:
    a = maximin_lhs(3, 30, rng=5)
    b = maximin_lhs(3, 30, rng=5)
    c = maximin_lhs(3, 30, rng=6)
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a, c)
    assert_latin(a)


def test_two_points_cannot_improve_and_are_returned() -> None:
    start = lhs(3, 2, rng=0)
    res = anneal_maximin(start, rng=0)
    assert np.array_equal(res.points, start)


def test_a_one_point_maximin_lhs_is_a_point_of_the_cube() -> None:
    # Nothing to spread: one point has no distance to another (annealing would divide by none).
    (point,) = maximin_lhs(3, 1, rng=0)
    assert ((point >= 0) & (point < 1)).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"profile": "FAST"}, "profile"),
        ({"c": 1.5}, "c"),
        ({"T0": 0}, "T0"),
        ({"it": 0}, "it"),
    ],
)
def test_bad_annealing_options(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        anneal_maximin(lhs(2, 5, rng=0), rng=0, **kwargs)


def test_coincident_points_are_refused() -> None:
    with pytest.raises(ValueError, match="coincide"):
        anneal_maximin(np.array([[0.1, 0.2], [0.1, 0.2], [0.5, 0.9]]), rng=0)
