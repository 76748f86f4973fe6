"""WSP's search tells how far it is, for the bars of `mptcplab design` and of a campaign's
planning: every WSP run is counted, the first expected count is the bisection's own bound, and
the count ends equal to what was expected. Telling changes nothing in the design."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mptcplab.design import generate, wsp, wsp_design, wsp_search
from mptcplab.design.metrics import resolve_metric, unit_cube_diameter
from mptcplab.design.sobol import sobol_base2


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, expected: int) -> None:
        self.calls.append((done, expected))


@pytest.mark.parametrize(
    ("d", "n", "metric"),
    [(2, 10, "euclidean"), (3, 40, "euclidean"), (6, 60, "euclidean"), (4, 30, "cityblock")],
)
def test_every_run_is_told_and_the_count_ends_as_expected(d: int, n: int, metric: str) -> None:
    cand = sobol_base2(d, 9, rng=3)
    told = Recorder()
    res = wsp_search(cand, n, seed_index=0, metric=metric, progress=told)
    done = [c[0] for c in told.calls[:-1]]
    # One call per WSP run, in order, then the closing call.
    assert done == list(range(1, res.evaluations + 1))
    assert told.calls[-1] == (res.evaluations, res.evaluations)
    assert all(done <= expected for done, expected in told.calls)
    # While bisecting, the expected count is the bisection's bound: the bracket, the cube's
    # diameter wide, halves each run and the search stops it once it is 1e-13 * (hi + 1)
    # wide, hi being at most the diameter.
    width = unit_cube_diameter(resolve_metric(metric)[1], d) * (1 + 1e-9) + 1e-12
    bound = math.ceil(math.log2(width / 1e-13))
    first_expected = told.calls[0][1]
    assert first_expected == bound
    bisection_runs = sum(1 for _, expected in told.calls[:-1] if expected == first_expected)
    if bisection_runs < res.evaluations or res.n_dropped:
        # The bisection ran to its end (a scan or a thinning followed): it took the bound, or
        # fewer by at most log2(diameter + 1) halvings.
        assert bound - math.ceil(math.log2(width + 1)) <= bisection_runs <= bound


def test_telling_changes_nothing_in_the_design() -> None:
    plain = wsp(5, 50, rng=7, restarts=2)
    told = wsp(5, 50, rng=7, restarts=2, progress=Recorder())
    np.testing.assert_array_equal(plain, told)


def test_restarts_count_on_from_each_other_and_end_full() -> None:
    told = Recorder()
    wsp_design(3, 30, rng=2, restarts=3, init="random", progress=told)
    done = [c[0] for c in told.calls]
    # Every run of the three searches counted once, in order (each search also closes with a
    # call that repeats its last count).
    assert done == sorted(done) and set(done) == set(range(1, done[-1] + 1))
    assert all(d <= e for d, e in told.calls)
    # The first search expects the other two to take as many runs as itself.
    assert told.calls[0][1] % 3 == 0
    assert told.calls[-1][0] == told.calls[-1][1] == done[-1]


def test_a_given_candidate_set_searched_once_ends_full() -> None:
    told = Recorder()
    wsp_design(2, 12, rng=1, restarts=4, candidates=sobol_base2(2, 7, rng=1), progress=told)
    assert told.calls[-1][0] == told.calls[-1][1]


def test_generate_hands_the_progress_to_wsp_only() -> None:
    told = Recorder()
    generate("wsp", 3, 20, rng=1, progress=told)
    assert told.calls and told.calls[-1][0] == told.calls[-1][1]
    for kind in ("lhs", "sobol", "random"):
        quiet = Recorder()
        generate(kind, 3, 16, rng=1, progress=quiet)
        assert quiet.calls == []
