"""A dmin search's WSP runs, each resumed after the steps an earlier run's path shares with it,
select exactly what WSP's plain loop selects from scratch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mptcplab.design.metrics import METRICS
from mptcplab.design.wsp import wsp_candidates, wsp_design, wsp_seed_index
from mptcplab.design.wsp_runs import WspRuns


def plain_wsp(cand: np.ndarray, dmin: float, seed: int, metric: str) -> list[int]:
    """WSP as Santiago et al. (2012) state it, one candidate at a time: drop every candidate
    closer than dmin to the current point, move to the nearest one left (lowest index on a
    tie)."""
    dist = METRICS[metric]
    alive = np.ones(cand.shape[0], dtype=bool)
    alive[seed] = False
    selected = [seed]
    while True:
        idx = np.flatnonzero(alive)
        d = dist(cand[selected[-1]], cand[idx])
        alive[idx[d < dmin]] = False
        idx, d = idx[d >= dmin], d[d >= dmin]
        if idx.size == 0:
            return selected
        nxt = int(idx[np.argmin(d)])
        alive[nxt] = False
        selected.append(nxt)


@pytest.mark.parametrize("metric", ["euclidean", "cityblock", "chebyshev"])
@pytest.mark.parametrize("d", [2, 5])
def test_runs_in_a_search_order_select_what_a_fresh_run_selects(metric: str, d: int) -> None:
    cand = wsp_candidates(d, 512, rng=3)
    seed = wsp_seed_index(cand)
    runs = WspRuns(cand, seed, METRICS[metric])
    # A bisection's sequence closing in on one value, then trials on both sides of it: most
    # runs resume after a long shared prefix, some after none.
    lo, hi = 0.0, float(METRICS[metric](np.zeros(d), np.ones((1, d)))[0])
    dmins = []
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        dmins.append(mid)
        lo, hi = (mid, hi) if len(dmins) % 3 else (lo, mid)
    dmins += [dmins[-1] * (1 + s) for s in (1e-3, -1e-3, 1e-12, 0.3, -0.3)] + [0.0, dmins[5]]
    for dmin in dmins:
        assert runs.select(dmin).tolist() == plain_wsp(cand, dmin, seed, metric), dmin


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 60),
    d=st.integers(1, 4),
    data=st.data(),
)
def test_any_order_of_dmins_gives_the_fresh_runs(n: int, d: int, data: st.DataObject) -> None:
    rng = np.random.default_rng(n * 10 + d)
    # A coarse grid has many equal distances: ties on both sides of a dmin.
    cand = rng.integers(0, 5, size=(n, d)) / 4.0
    seed = data.draw(st.integers(0, n - 1))
    dmin = st.sampled_from([0.0, 0.25, 0.3, 0.5, 0.6, 1.0, 1.5])
    # A run may stop at a limit: the next runs resume from its path as from a whole one.
    limit = st.none() | st.integers(1, n + 1)
    calls = data.draw(st.lists(st.tuples(dmin, limit), max_size=8))
    runs = WspRuns(cand, seed, METRICS["euclidean"])
    for dmin_value, limit_value in calls:
        fresh = plain_wsp(cand, dmin_value, seed, "euclidean")
        expected = fresh if limit_value is None else fresh[:limit_value]
        assert runs.select(dmin_value, limit=limit_value).tolist() == expected


def test_a_search_picks_the_design_of_its_runs_from_scratch() -> None:
    """The whole search, resumed runs and all, ends on a design that a fresh WSP run at its
    dmin selects (before any thinning)."""
    res = wsp_design(4, 60, rng=11, exact=False)
    fresh = plain_wsp(res.candidates, res.dmin, res.seed_index, "euclidean")
    assert res.indices.tolist() == fresh
