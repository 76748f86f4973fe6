"""WSP: packing guarantees, dmin search, reproducibility (spec algorithms.md §4.2-§4.4, §6.4)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist, pdist

from mptcplab.design import wsp, wsp_design, wsp_search, wsp_select
from mptcplab.design.wsp import wsp_candidates, wsp_seed_index

REL = 1e-12  # distances computed by two different routines may differ by a few ulps


def _packing_holds(cand: np.ndarray, selected: np.ndarray, dmin: float, metric: str) -> None:
    chosen = cand[selected]
    assert len(set(selected.tolist())) == selected.size, "a candidate was selected twice"
    if selected.size > 1:
        assert pdist(chosen, metric=metric).min() >= dmin * (1 - REL)
    removed = np.setdiff1d(np.arange(cand.shape[0]), selected)
    if removed.size:
        nearest = cdist(cand[removed], chosen, metric=metric).min(axis=1)
        assert np.all(nearest < dmin * (1 + REL)), "a removed candidate is dmin away from all"


DIAMETER = {"euclidean": np.sqrt, "cityblock": float, "chebyshev": lambda d: 1.0}


@pytest.mark.parametrize("metric", ["euclidean", "cityblock", "chebyshev"])
@pytest.mark.parametrize(("d", "fraction"), [(2, 0.04), (2, 0.15), (4, 0.2), (6, 0.35)])
def test_selected_points_are_dmin_apart_and_cover_the_removed_ones(
    metric: str, d: int, fraction: float
) -> None:
    dmin = fraction * DIAMETER[metric](d)
    cand = np.random.default_rng(d).random((600, d))
    seed = wsp_seed_index(cand, init="center", metric=metric)
    selected = wsp_select(cand, dmin, seed_index=seed, metric=metric)
    assert 1 < selected.size < cand.shape[0]
    _packing_holds(cand, selected, dmin, metric)


def test_seed_is_the_candidate_nearest_the_centre() -> None:
    cand = np.random.default_rng(3).random((300, 3))
    expected = int(np.argmin(np.linalg.norm(cand - 0.5, axis=1)))
    assert wsp_seed_index(cand, init="center") == expected
    assert wsp_select(cand, 0.3, seed_index=expected)[0] == expected


def test_hand_worked_example_on_a_dyadic_grid() -> None:
    # Candidates k/8. Seed 1/2 removes 1/4..3/4 (distance < 0.3); the nearest survivors 1/8 and 7/8
    # tie at 3/8 and the lower index wins; 1/8 removes 0; 7/8 is next and removes 1; nothing is
    # left. (DiceDesign would append candidate #1 at this point; the spec forbids that.)
    cand = (np.arange(9) / 8.0)[:, None]
    selected = wsp_select(cand, 0.3, seed_index=4)
    assert cand[selected, 0].tolist() == [0.5, 0.125, 0.875]


def test_no_spurious_point_when_the_last_seed_clears_the_set() -> None:
    cand = np.array([[0.5], [0.55], [0.6]])
    selected = wsp_select(cand, 0.08, seed_index=0)
    assert selected.tolist() == [0, 2]


def test_extreme_dmin_gives_all_or_one_point() -> None:
    d = 3
    cand = np.random.default_rng(11).random((257, d))
    seed = wsp_seed_index(cand)
    assert wsp_select(cand, 0.0, seed_index=seed).size == cand.shape[0]
    assert wsp_select(cand, 1e-9, seed_index=seed).size == cand.shape[0]
    assert wsp_select(cand, np.sqrt(d) * 1.0001, seed_index=seed).tolist() == [seed]


@pytest.mark.parametrize(("d", "n"), [(2, 50), (6, 200), (8, 100)])
def test_search_reaches_the_requested_size(d: int, n: int) -> None:
    res = wsp_design(d, n, rng=2024)
    assert res.points.shape == (n, d)
    assert res.candidates.shape[0] >= 20 * n
    # The bisection itself lands within 2 %; thinning closes the rest.
    assert abs(res.n_selected - n) <= max(1, 0.02 * n)
    assert res.n_selected - res.n_dropped == n
    assert pdist(res.points).min() >= res.dmin * (1 - REL)
    if res.n_dropped == 0:
        _packing_holds(res.candidates, res.indices, res.dmin, "euclidean")


def test_thinning_to_exact_size_drops_closest_pairs() -> None:
    cand = np.random.default_rng(5).random((400, 2))
    seed = wsp_seed_index(cand)
    # A few bisection steps and no local scan: the size is not hit and must be thinned.
    res = wsp_search(cand, 37, seed_index=seed, max_iter=6, scan=0)
    assert res.n == 37
    assert res.n_dropped > 0
    assert res.n_selected == 37 + res.n_dropped
    before = cand[wsp_select(cand, res.dmin, seed_index=seed)]
    assert before.shape[0] == res.n_selected
    # Dropping points of the closest pair never lowers the minimum distance.
    assert pdist(res.points).min() >= pdist(before).min()


def test_inexact_mode_returns_an_unthinned_wsp_design() -> None:
    cand = np.random.default_rng(6).random((500, 3))
    seed = wsp_seed_index(cand)
    res = wsp_search(cand, 40, seed_index=seed, max_iter=3, scan=0, exact=False)
    assert res.n_dropped == 0
    _packing_holds(cand, res.indices, res.dmin, "euclidean")


@pytest.mark.parametrize(("d", "n"), [(2, 50), (6, 200)])
def test_wsp_beats_uniform_random_sampling(d: int, n: int) -> None:
    points = wsp(d, n, rng=7)

    def coverage(x: np.ndarray) -> float:
        dm = cdist(x, x)
        np.fill_diagonal(dm, np.inf)
        gamma = dm.min(axis=1)
        return float(np.sqrt(np.mean((gamma - gamma.mean()) ** 2)) / gamma.mean())

    for seed in range(5):
        rand = np.random.default_rng(100 + seed).random((n, d))
        assert pdist(points).min() > pdist(rand).min()
        assert coverage(points) < coverage(rand)


def test_same_seed_same_design_other_seed_other_design() -> None:
    a = wsp(4, 60, rng=123)
    b = wsp(4, 60, rng=123)
    c = wsp(4, 60, rng=124)
    assert a.tobytes() == b.tobytes()
    assert a.shape == c.shape
    assert not np.array_equal(a, c)
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert wsp(2, 20, rng=g1).tobytes() == wsp(2, 20, rng=g2).tobytes()


def test_random_candidates_random_init_and_restarts() -> None:
    best = wsp_design(3, 30, rng=1, candidates="random", init="random", restarts=4)
    first = wsp_design(3, 30, rng=1, candidates="random", init="random", restarts=1)
    assert best.points.shape == first.points.shape == (30, 3)
    assert np.all((best.points >= 0) & (best.points <= 1))
    # The first restart draws exactly what a single run draws; the best of four is no worse.
    assert pdist(best.points).min() >= pdist(first.points).min()


def test_given_candidate_set_is_used() -> None:
    cand = np.random.default_rng(4).random((300, 2))
    res = wsp_design(2, 15, rng=0, candidates=cand)
    assert np.array_equal(res.points, cand[res.indices])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d": 2, "n": 0}, "n"),
        ({"d": 0, "n": 5}, "d"),
        ({"d": 2, "n": 5, "metric": "cosine"}, "metric"),
        ({"d": 2, "n": 5, "init": "corner"}, "init"),
        ({"d": 2, "n": 50, "n_candidates": 10}, "n_candidates"),
        ({"d": 2, "n": 5, "candidates": np.full((20, 2), 1.5)}, "candidates"),
        ({"d": 2, "n": 5, "candidates": 200}, "the number of candidates is n_candidates"),
        ({"d": 2, "n": 5, "rng": None}, "rng"),
    ],
)
def test_bad_arguments_are_clear_value_errors(kwargs: dict, message: str) -> None:
    kwargs.setdefault("rng", 0)
    with pytest.raises(ValueError, match=message):
        wsp(**kwargs)


@settings(max_examples=40, deadline=None)
@given(
    d=st.integers(1, 5),
    size=st.integers(2, 120),
    fraction=st.floats(0.0, 1.1),
    seed=st.integers(0, 2**32 - 1),
)
def test_packing_property_for_arbitrary_candidate_sets(
    d: int, size: int, fraction: float, seed: int
) -> None:
    gen = np.random.default_rng(seed)
    # Coarse coordinates make ties and coincident candidates likely.
    cand = np.round(gen.random((size, d)) * 8) / 8
    dmin = fraction * np.sqrt(d)
    start = int(gen.integers(size))
    selected = wsp_select(cand, dmin, seed_index=start)
    assert selected[0] == start
    if dmin > 0:
        _packing_holds(cand, selected, dmin, "euclidean")
    else:
        assert selected.size == size


def _restarts_one_by_one(d: int, n: int, seed: int, restarts: int, max_iter: int) -> list:
    """Each restart of wsp_design redone on its own: the same draws from one generator, in
    the same order (candidates, then the seed point)."""
    gen = np.random.default_rng(seed)
    found = []
    for _ in range(restarts):
        cand = wsp_candidates(d, 20 * n, rng=gen)
        seed_index = wsp_seed_index(cand, init="center", rng=gen)
        found.append(wsp_search(cand, n, seed_index=seed_index, max_iter=max_iter, exact=False))
    return found


@pytest.mark.parametrize(
    ("d", "n", "seed", "max_iter"), [(5, 100, 0, 60), (3, 40, 1, 4), (2, 25, 3, 3), (4, 30, 5, 4)]
)
def test_inexact_restarts_prefer_the_size_nearest_n_then_the_largest_mindist(
    d: int, n: int, seed: int, max_iter: int
) -> None:
    one_by_one = _restarts_one_by_one(d, n, seed, 6, max_iter)
    rank = [(abs(r.n - n), -pdist(r.points).min()) for r in one_by_one]
    expected = one_by_one[rank.index(min(rank))]
    got = wsp_design(d, n, rng=seed, exact=False, restarts=6, max_iter=max_iter)
    assert np.array_equal(got.points, expected.points)
    assert abs(got.n - n) == min(abs(r.n - n) for r in one_by_one)


def test_copies_among_given_candidates_count_once() -> None:
    # 50 copies of one point and three others: four distinct candidates.
    cand = np.vstack([np.full((50, 2), 0.3), [[0.1, 0.9], [0.9, 0.1], [0.9, 0.9]]])
    for call in (
        lambda: wsp(2, 5, rng=1, candidates=cand),
        lambda: wsp_search(cand, 5, seed_index=0),
    ):
        with pytest.raises(
            ValueError, match="n: 5 points requested from only 4 distinct candidates"
        ):
            call()
    four = wsp(2, 4, rng=1, candidates=cand)
    assert np.unique(four, axis=0).shape[0] == 4


@pytest.mark.parametrize(
    ("candidates", "message"),
    [
        ([[0.1, 0.2], [0.3]], "row 0 has 2 values and row 1 has 1 value"),
        ([[0.1, 0.2], 0.3], "row 0 has 2 values and row 1 has a number"),
    ],
)
def test_ragged_candidates_say_which_rows_differ(candidates: list, message: str) -> None:
    with pytest.raises(
        ValueError, match=rf"^candidates: expected an \(n, d\) array, but {message}$"
    ):
        wsp(2, 1, rng=0, candidates=candidates)
