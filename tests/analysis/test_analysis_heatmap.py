"""The heat map picks the pair of factors the metric depends on and shows each cell's median."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mptcplab.analysis import heat_grid
from mptcplab.analysis.heatmap import bins_per_factor
from mptcplab.analysis.plots import heat_map

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _medians(metric_of, points: int = 400, seed: int = 3) -> pd.DataFrame:
    """Uniform random points over four factors, two variants; the metric as ``metric_of`` says."""
    rng = np.random.default_rng(seed)
    frames = []
    for variant, offset in (("cc=lia", 0.0), ("cc=olia", 5.0)):
        frame = pd.DataFrame(rng.uniform(0.0, 1.0, size=(points, 4)), columns=["a", "b", "c", "d"])
        frame["metric"] = metric_of(frame) + offset
        frame["variant"] = variant
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_the_pair_the_metric_depends_on_is_drawn() -> None:
    # The metric is b·d plus a little noise from a and c: the pair (b, d) explains it.
    rng = np.random.default_rng(11)
    medians = _medians(lambda f: 3 * f["b"] * f["d"] + 0.05 * rng.normal(size=len(f)))
    grid = heat_grid(medians, "metric", ["a", "b", "c", "d"], ["cc=lia", "cc=olia"])
    assert grid is not None
    assert (grid.x, grid.y) == ("b", "d")
    assert grid.explained > 0.9


def test_an_interaction_alone_is_found() -> None:
    # Neither factor alone moves the mean (a checkerboard), only the two together.
    medians = _medians(lambda f: np.where((f["a"] > 0.5) ^ (f["c"] > 0.5), 1.0, -1.0))
    grid = heat_grid(medians, "metric", ["a", "b", "c", "d"], ["cc=lia", "cc=olia"])
    assert grid is not None and (grid.x, grid.y) == ("a", "c")


def test_a_factorial_grid_keeps_one_cell_per_level_with_its_median() -> None:
    # Every (x, y) pair of levels three times; the metric is x + 10 y plus replication noise
    # 0, +1, -1, so each cell's median is exactly x + 10 y.
    levels_x, levels_y = [1.0, 2.0, 4.0], [0.5, 1.5]
    rows = [
        {"variant": "all", "x": x, "y": y, "metric": x + 10 * y + noise}
        for x in levels_x
        for y in levels_y
        for noise in (0.0, 1.0, -1.0)
    ]
    grid = heat_grid(pd.DataFrame(rows), "metric", ["x", "y"], ["all"])
    assert grid is not None
    assert grid.x_labels == ["1", "2", "4"] and grid.y_labels == ["0.5", "1.5"]
    expected = np.array([[x + 10 * y for x in levels_x] for y in levels_y])
    np.testing.assert_allclose(grid.values["all"], expected)
    assert (grid.counts["all"] == 3).all()


def test_quantile_bins_hold_about_equal_numbers_of_points() -> None:
    medians = _medians(lambda f: f["a"] + f["b"], points=256)
    grid = heat_grid(medians, "metric", ["a", "b"], ["cc=lia", "cc=olia"])
    assert grid is not None
    bins = bins_per_factor(256)
    assert len(grid.x_labels) == len(grid.y_labels) == bins == 8
    # The bins are shared by the variants, so that their panels compare cell by cell.
    per_column = (grid.counts["cc=lia"] + grid.counts["cc=olia"]).sum(axis=0)
    assert per_column.tolist() == [2 * 256 // bins] * bins
    assert grid.counts["cc=lia"].sum() == grid.counts["cc=olia"].sum() == 256


def test_no_heat_map_without_two_varying_factors() -> None:
    medians = _medians(lambda f: f["a"])
    assert heat_grid(medians, "metric", ["a"], ["cc=lia", "cc=olia"]) is None
    medians["b"] = 1.0  # constant: nothing to draw against
    assert heat_grid(medians, "metric", ["a", "b"], ["cc=lia", "cc=olia"]) is None


@pytest.mark.parametrize("offset", [0.0, -0.5])
def test_the_figure_renders_on_one_side_of_zero_and_across_it(offset: float) -> None:
    medians = _medians(lambda f: f["a"] * f["b"] + offset, points=64)
    grid = heat_grid(medians, "metric", ["a", "b", "c"], ["cc=lia", "cc=olia"])
    assert grid is not None
    assert heat_map(grid, "Mbit/s", higher_is_better=True).startswith(PNG_SIGNATURE)


def test_a_two_factor_grid_without_repeats_is_drawn_with_nothing_to_choose() -> None:
    # A 3 × 3 factorial of two factors: one point per cell, so no within-cell variance to
    # score the pair by, but it is the only pair and every cell holds its point's value.
    rows = [
        {"variant": v, "x": x, "y": y, "metric": x * y + (v == "b")}
        for v in ("a", "b")
        for x in (1.0, 2.0, 3.0)
        for y in (10.0, 20.0, 30.0)
    ]
    grid = heat_grid(pd.DataFrame(rows), "metric", ["x", "y"], ["a", "b"])
    assert grid is not None and np.isnan(grid.explained)
    expected = np.outer([10.0, 20.0, 30.0], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(grid.values["a"], expected)
    np.testing.assert_allclose(grid.values["b"], expected + 1)
