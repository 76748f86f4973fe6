"""The design engines called directly, as from a notebook, keep the bounds and argument checks
that ``generate`` and the campaign files keep: a bad argument is refused by name before any
work, never read by its truth value, cut to an integer or spelled out letter by letter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mptcplab.design import (
    Factor,
    anneal_maximin,
    cross,
    fractional_factorial,
    full_factorial,
    lhs,
    maximin_lhs,
    phi_p,
    quality,
    scale,
    sensitivity,
    sobol,
    uniform_random,
    unscale,
    wsp,
    wsp_search,
    wsp_select,
)
from mptcplab.design.wsp import MAX_CANDIDATES, wsp_candidates

FIVE = np.array([[0.1, 0.1], [0.9, 0.1], [0.5, 0.5], [0.1, 0.9], [0.9, 0.9]])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lhs(1, 10_001, rng=1), "n: at most 10000 points, got 10001"),
        (lambda: sobol(1, 10_001, rng=1), "n: at most 10000 points, got 10001"),
        (lambda: sobol(1_001, 2, rng=1), "d: at most 1000 factors, got 1001"),
        (lambda: uniform_random(1, 10**12, rng=1), "n: at most 10000 points"),
        (lambda: maximin_lhs(2, 10_001, rng=1), "n: at most 10000 points"),
        # Given candidates: the bound is checked before the candidate count.
        (lambda: wsp(2, 10_001, rng=1, candidates=FIVE), "n: at most 10000 points"),
        (lambda: wsp_search(FIVE, 10_001, seed_index=0), "n: at most 10000 points"),
        (lambda: quality(np.zeros((10_001, 1))), "points: at most 10000 points"),
    ],
)
def test_every_engine_keeps_the_design_size_bounds(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_candidate_sets_have_their_own_bound() -> None:
    with pytest.raises(ValueError, match=f"n_candidates: at most {MAX_CANDIDATES}"):
        wsp_candidates(2, MAX_CANDIDATES + 1, rng=1)
    with pytest.raises(ValueError, match="oversampling: 1000 x 10000 points"):
        wsp(2, 10_000, rng=1, oversampling=1000)
    # Random candidates are the same draws as a uniform design of that size.
    assert np.array_equal(wsp_candidates(3, 50, rng=4, kind="random"), uniform_random(3, 50, rng=4))


def test_a_string_is_not_a_list_of_levels() -> None:
    with pytest.raises(ValueError, match="factor 'cc': expected 'levels', a non-empty list"):
        Factor.categorical("cc", "olia")
    with pytest.raises(ValueError, match="factor 'cc': expected 'levels'"):
        cross(pd.DataFrame({"rtt_ms": [10.0]}), {"cc": "olia"})
    assert Factor.categorical("cc", iter(["lia", "olia"])).levels == ("lia", "olia")


def test_scale_and_unscale_name_what_they_expected() -> None:
    factors = [Factor.continuous("a", 0, 1), Factor.continuous("b", 0, 1)]
    with pytest.raises(ValueError, match="points: expected a numeric"):
        scale([["x", 0.5]], factors)
    with pytest.raises(ValueError, match="factor 'a': point 0 has coordinate nan"):
        scale(np.array([[None, 0.5]], dtype=object), factors)
    with pytest.raises(ValueError, match="frame: expected a pandas DataFrame"):
        unscale(np.zeros((2, 2)), factors)


def test_annealing_options_are_checked_even_when_there_is_nothing_to_anneal() -> None:
    with pytest.raises(ValueError, match="T0: expected a positive number"):
        maximin_lhs(2, 1, rng=1, T0=-1)
    with pytest.raises(ValueError, match="profile: expected one of"):
        maximin_lhs(2, 1, rng=1, profile="FAST")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="design: annealing needs at least two points"):
        anneal_maximin([[0.5, 0.5]], rng=1)


def test_geom_morris_refuses_an_inner_loop_that_proposes_nothing() -> None:
    # DiceDesign's inner loop runs while I < Imax from I = 1: Imax = 1 never proposes a swap.
    with pytest.raises(ValueError, match="Imax: expected an integer >= 2 with profile GEOM_MORRIS"):
        maximin_lhs(2, 6, rng=1, profile="GEOM_MORRIS", Imax=1)
    result = anneal_maximin(lhs(2, 6, rng=1), rng=2, profile="GEOM_MORRIS", Imax=2, it=3)
    assert result.iterations >= 1


def test_a_seed_index_must_be_an_integer() -> None:
    with pytest.raises(ValueError, match="seed_index: expected a candidate index"):
        wsp_select(FIVE, 0.1, seed_index=1.7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed_index: expected a candidate index"):
        wsp_search(FIVE, 3, seed_index=0.5)  # type: ignore[arg-type]
    assert wsp_select(FIVE, 0.5, seed_index=np.int64(2))[0] == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: wsp_search(FIVE, 3, seed_index=0, exact="no"), "exact: expected true or false"),
        (lambda: quality(FIVE, projections="no"), "projections: expected true or false"),
        (lambda: quality(FIVE, p="50"), "p: expected a number, got '50'"),
        (lambda: phi_p(FIVE, float("inf")), "p: expected a positive exponent"),
    ],
)
def test_flags_and_exponents_are_not_read_by_their_truth_value(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_fractional_factorial_arguments() -> None:
    with pytest.raises(ValueError, match=r"k: 2\^20 runs for 20 basic factors"):
        fractional_factorial(20, [])
    # No generators: the full two-level factorial, whether written [] or None.
    assert np.array_equal(fractional_factorial(4, None), full_factorial(2, d=4))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="generators: expected a list of strings"):
        fractional_factorial(4, 5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("generators", "message"),
    [
        (["C=A"], "generator 'C=A': C would repeat A"),
        (["C=AB", "D=AB"], "generators 'C=AB' and 'D=AB': the two factors would have the same"),
        (["C=AB", "D=-BA"], "generators 'C=AB' and 'D=-BA'"),
    ],
)
def test_generators_that_alias_two_factors_are_refused(generators, message) -> None:
    k = 2 + len(generators)
    with pytest.raises(ValueError, match=message):
        fractional_factorial(k, generators)


def test_sensitivity_takes_designs_by_name() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [1.5, 2.0, 3.0, 5.0]
    by_list = sensitivity([a, b])
    for named in (
        sensitivity({"wsp": a, "lhs": b}),
        sensitivity(pd.DataFrame({"wsp": a, "lhs": b})),
    ):
        assert list(named.columns[:2]) == ["wsp", "lhs"]
        assert np.array_equal(named.to_numpy(), by_list.to_numpy())
    with pytest.raises(ValueError, match="design 1: expected numbers"):
        sensitivity([a, ["x", "y"]])
    with pytest.raises(ValueError, match=r"design name\(s\) \['mean'\] clash"):
        sensitivity({"mean": a, "lhs": b})
