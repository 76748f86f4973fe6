"""Maximin LHS of thousands of points: the running phi_p sum is updated from the two changed
rows, and summed afresh only when its error bound asks for it. With the bound of n unit
roundoffs that once applied to every size, a design of 4,504 points or more summed its whole
n x n matrix at every step (minutes for 5,000 points)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mptcplab.design import anneal_maximin, lhs
from mptcplab.design.lhs import _PhiState

N = 4_600  # above 1e-12 / 2^-52 = 4,503.6 points


@pytest.fixture(scope="module")
def start() -> np.ndarray:
    return lhs(2, N, rng=5)


def test_a_large_design_is_annealed_without_summing_afresh_each_step(
    start: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh_sums = 0
    ix = np.ix_

    def counted(*args: np.ndarray) -> tuple[np.ndarray, ...]:
        nonlocal fresh_sums
        fresh_sums += 1
        return ix(*args)

    # The full re-sum is the one place that selects a submatrix with np.ix_.
    monkeypatch.setattr(np, "ix_", counted)
    result = anneal_maximin(start, rng=1, it=40)
    assert result.accepted >= 10
    assert fresh_sums <= 1


def test_the_updated_sum_stays_within_its_bound_of_an_exact_sum(start: np.ndarray) -> None:
    state = _PhiState(start, 50.0)
    gen = np.random.default_rng(3)
    for _ in range(60):
        i, j = gen.choice(N, size=2, replace=False)
        k = int(gen.integers(0, 2))
        total, dists, ti, tj = state.propose(int(i), int(j), k)
        assert math.isfinite(total)
        state.accept(int(i), int(j), k, total, dists, ti, tj)
    exact = math.fsum(state.terms.ravel().tolist()) / 2.0
    assert abs(state.total - exact) <= state.error
    assert state.error < 1e-12 * state.total
