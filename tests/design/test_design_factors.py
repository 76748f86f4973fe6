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


def test_integer_factor_is_rounded_half_up() -> None:
    f = Factor.integer("subflows", 1, 5)  # x = 1 + 4u
    u = np.array([[0.0], [0.1], [0.125], [0.3], [0.874], [0.875], [1.0]])
    frame = scale(u, [f])
    assert frame["subflows"].tolist() == [1, 1, 2, 2, 4, 5, 5]
    assert frame["subflows"].dtype.kind == "i"


def test_integer_factor_on_log_scale() -> None:
    f = Factor.integer("buffer_pkts", 10, 1000, log=True)
    values = scale(np.array([[0.0], [0.5], [1.0]]), [f])["buffer_pkts"].tolist()
    assert values == [10, 100, 1000]


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
