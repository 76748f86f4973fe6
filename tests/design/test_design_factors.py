"""Factor definitions and the unit-cube <-> factor-value mapping (spec algorithms.md §4.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mptcplab.design import Factor, scale, unscale


def test_log_scale_maps_ends_and_middle_geometrically() -> None:
    f = Factor.continuous("capacity_mbps", 0.1, 100.0, log=True)
    frame = scale(np.array([[0.0], [1.0], [0.5], [0.25]]), [f])
    values = frame["capacity_mbps"].tolist()
    assert values[0] == 0.1
    assert values[1] == 100.0
    assert values[2] == pytest.approx(math.sqrt(0.1 * 100.0), rel=1e-12)
    assert values[3] == pytest.approx(0.1**0.75 * 100.0**0.25, rel=1e-12)


def test_linear_scale() -> None:
    f = Factor.continuous("rtt_ms", 10.0, 50.0)
    values = scale(np.array([[0.0], [0.5], [1.0], [0.1]]), [f])["rtt_ms"].tolist()
    assert values[:3] == [10.0, 30.0, 50.0]
    assert values[3] == pytest.approx(14.0)


# Integer factors: each of the K values owns an equal-width bin of [0, 1] (spec §4.1 rounds
# after scaling; the scale is [low - 1/2, high + 1/2] so the end values get whole bins).
# Two values had equal bins already; three or more are where the end values lost half theirs.
INTEGER_RANGES = [(1, 4), (0, 2), (-3, 3), (10, 17), (-7, -5), (0, 99)]


@pytest.mark.parametrize(("low", "high"), INTEGER_RANGES)
def test_integer_values_take_equal_shares_of_the_unit_interval(low: int, high: int) -> None:
    count = high - low + 1
    # Midpoints of a grid of 1000 K cells: exactly 1000 fall in each of K equal bins.
    u = (np.arange(1000 * count) + 0.5) / (1000 * count)
    values = Factor.integer("k", low, high).to_values(u)
    shares = {int(v): int(c) for v, c in zip(*np.unique(values, return_counts=True), strict=True)}
    assert shares == dict.fromkeys(range(low, high + 1), 1000)
    # The ends are reached exactly, at the ends of [0, 1].
    assert Factor.integer("k", low, high).to_values([0.0, 1.0]).tolist() == [low, high]


def test_integer_shares_under_uniform_sampling() -> None:
    u = np.random.default_rng(5).random(200_000)
    values = Factor.integer("k", 1, 4).to_values(u)
    shares = np.bincount(values - 1, minlength=4) / u.size
    # Four binomial standard errors of a 1/4 share in 200,000 draws: 0.004.
    assert np.allclose(shares, 0.25, atol=0.004)


@pytest.mark.parametrize("levels", [3, 4, 5, 7])
def test_a_latin_hypercube_with_one_point_per_level_hits_every_level(levels: int) -> None:
    from mptcplab.design import lhs, maximin_lhs

    for seed in range(20):
        for points in (lhs(3, levels, rng=seed), maximin_lhs(2, levels, rng=seed, it=20)):
            for j in range(points.shape[1]):
                hit = Factor.integer("k", 1, levels).to_values(points[:, j])
                assert sorted(hit.tolist()) == list(range(1, levels + 1)), (seed, j)


@pytest.mark.parametrize(("low", "high"), [(1, 4), (1, 30), (10, 1000), (3, 5)])
def test_integer_log_scale_shares_follow_log_bin_widths(low: int, high: int) -> None:
    f = Factor.integer("buffer_pkts", low, high, log=True)
    cells = 400_000
    u = (np.arange(cells) + 0.5) / cells
    counts = np.bincount(f.to_values(u) - low, minlength=high - low + 1)
    v = np.arange(low, high + 1, dtype=float)
    expected = np.log((v + 0.5) / (v - 0.5)) / math.log((high + 0.5) / (low - 0.5))
    # Each bin's two edges are placed to within one grid cell.
    assert np.all(np.abs(counts / cells - expected) <= 2.0 / cells)
    assert f.to_values([0.0, 1.0]).tolist() == [low, high]


@pytest.mark.parametrize(("low", "high", "log"), [(1, 4, False), (-3, 3, False), (1, 50, True)])
def test_integer_to_unit_is_the_position_in_the_extended_range_and_round_trips(
    low: int, high: int, log: bool
) -> None:
    f = Factor.integer("k", low, high, log=log)
    v = np.arange(low, high + 1)
    unit = f.to_unit(v)
    if log:
        edges = math.log(low - 0.5), math.log(high + 0.5)
        position = (np.log(v) - edges[0]) / (edges[1] - edges[0])
    else:
        position = (v - low + 0.5) / (high - low + 1)  # the centre of the value's bin
    assert np.allclose(unit, position, rtol=0, atol=1e-12)
    assert f.to_values(unit).tolist() == v.tolist()
    frame = scale(unit[:, None], [f])
    assert np.allclose(unscale(frame, [f]).ravel(), unit, rtol=0, atol=1e-12)


def test_integer_bounds_past_2_to_the_53_are_refused_and_those_up_to_it_kept() -> None:
    top = 2**53
    # float(2**53 + 1) is 2**53, and 2**63 - 1 wrapped to -2**63 at u = 1.
    for low, high, field in [
        (0, top + 1, "high"),
        (0, 2**63 - 1, "high"),
        (-top - 1, 0, "low"),
        (0, 2.0**60, "high"),
    ]:
        with pytest.raises(
            ValueError, match=rf"factor 'x': expected an integer '{field}' within ±2\^53"
        ):
            Factor.integer("x", low, high)
    assert Factor.integer("x", -top, top).to_values([0.0, 1.0]).tolist() == [-top, top]
    near = Factor.integer("x", top - 3, top).to_values([0.0, 0.3, 0.6, 1.0]).tolist()
    assert near == [top - 3, top - 2, top - 1, top]


def test_categorical_levels_by_equal_width_bins() -> None:
    f = Factor.categorical("cc", ["lia", "olia", "balia"])
    u = np.array([[0.0], [0.33], [1 / 3], [0.66], [2 / 3], [0.999], [1.0]])
    assert scale(u, [f])["cc"].tolist() == ["lia", "lia", "olia", "olia", "balia", "balia", "balia"]


def test_scale_mixes_kinds_and_keeps_point_ids() -> None:
    factors = [
        Factor.continuous("a", 0, 1),
        Factor.integer("b", 0, 2),
        Factor.categorical("c", [True, False]),
    ]
    u = np.array([[0.1, 0.1, 0.1], [0.2, 0.9, 0.9], [0.3, 0.1, 0.2]])
    frame = scale(u, factors)
    assert list(frame.columns) == ["a", "b", "c"]
    assert frame.index.name == "point_id"
    assert frame.index.tolist() == [0, 1, 2]
    records = frame.to_dict("records")
    assert records[1] == {"a": 0.2, "b": 2, "c": False}


def test_dedupe_drops_rows_made_identical_by_rounding() -> None:
    factors = [Factor.integer("k", 0, 1), Factor.categorical("c", ["x", "y"])]
    u = np.array([[0.1, 0.1], [0.2, 0.2], [0.9, 0.9], [0.1, 0.9]])
    frame = scale(u, factors, dedupe=True)
    assert frame.index.tolist() == [0, 2, 3]
    assert len(scale(u, factors)) == 4


def test_unscale_inverts_scale_for_numeric_factors() -> None:
    factors = [Factor.continuous("a", 2, 8), Factor.continuous("b", 1, 1000, log=True)]
    u = np.random.default_rng(0).random((20, 2))
    assert np.allclose(unscale(scale(u, factors), factors), u, atol=1e-12)
    cat = Factor.categorical("c", ["p", "q", "r", "s"])
    assert unscale(scale(np.array([[0.1], [0.6]]), [cat]), [cat]).ravel().tolist() == [
        0.125,
        0.625,
    ]


def test_from_mapping_infers_kind_and_takes_name_from_key() -> None:
    assert Factor.from_mapping({"levels": ["a", "b"]}, name="cc").kind == "categorical"
    f = Factor.from_mapping({"low": 0.1, "high": 100, "log": True}, name="capacity")
    assert (f.kind, f.low, f.high, f.log) == ("continuous", 0.1, 100.0, True)
    g = Factor.from_mapping({"name": "n", "kind": "integer", "low": 1, "high": 4})
    assert (g.low, g.high) == (1, 4)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Factor.continuous("rtt", 5, 5), r"factor 'rtt': expected low < high"),
        (lambda: Factor.continuous("cap", 0, 10, log=True), r"factor 'cap'.*low > 0"),
        (lambda: Factor.integer("k", 1.5, 4), r"factor 'k': expected an integer for 'low'"),
        (lambda: Factor.continuous("x", 0, float("inf")), r"factor 'x'.*finite number"),
        (lambda: Factor(name="x", kind="ordinal", low=0, high=1), r"factor 'x': kind"),
        (lambda: Factor(name="cc", kind="categorical"), r"factor 'cc': expected 'levels'"),
        (lambda: Factor.categorical("cc", []), r"factor 'cc': expected at least one level"),
        (lambda: Factor.categorical("cc", ["a", "a"]), r"factor 'cc': levels must be distinct"),
        (lambda: Factor(name="cc", kind="categorical", low=0, levels=("a",)), r"not low/high"),
        (lambda: Factor(name="", low=0, high=1), r"factor name"),
        (lambda: Factor.from_mapping({"low": 0, "hi": 1}, name="q"), r"factor 'q': unknown"),
    ],
)
def test_invalid_factors_name_the_factor_and_the_expectation(build, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_scale_rejects_points_outside_the_cube_naming_the_factor() -> None:
    factors = [Factor.continuous("a", 0, 1), Factor.continuous("rtt_ms", 0, 50)]
    with pytest.raises(
        ValueError, match=r"factor 'rtt_ms': point 1 .*expected a value in \[0, 1\]"
    ):
        scale(np.array([[0.1, 0.2], [0.3, 1.5]]), factors)
    with pytest.raises(ValueError, match="2 columns for 1 factors"):
        scale(np.array([[0.1, 0.2]]), factors[:1])
    with pytest.raises(ValueError, match="names must be distinct"):
        scale(np.array([[0.1, 0.2]]), [factors[0], factors[0]])
    with pytest.raises(ValueError, match=r"factor 'a': value 2.0 outside"):
        unscale(scale(np.array([[0.1, 0.2]]), factors).assign(a=2.0), factors)
