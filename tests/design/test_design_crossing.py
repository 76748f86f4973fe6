"""Crossing qualitative factors with a space-filling design (spec algorithms.md §4.6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mptcplab.design import Factor, cross, scale


def _design() -> pd.DataFrame:
    factors = [Factor.continuous("capacity_mbps", 1, 100), Factor.continuous("rtt_ms", 0, 50)]
    return scale(np.array([[0.1, 0.2], [0.5, 0.5], [0.9, 0.3]]), factors)


def test_every_variant_sees_the_same_points() -> None:
    design = _design()
    runs = cross(design, {"cc": ["lia", "olia"], "rbuf": ["auto", "fixed"]})
    assert len(runs) == 3 * 2 * 2
    assert list(runs.columns) == ["point_id", "capacity_mbps", "rtt_ms", "cc", "rbuf"]
    variants = runs.groupby(["cc", "rbuf"])
    assert variants.ngroups == 4
    for _, block in variants:
        block = block.set_index("point_id").sort_index()
        pd.testing.assert_frame_equal(block[["capacity_mbps", "rtt_ms"]], design, check_names=False)
    # Every (point, variant) combination appears exactly once.
    assert not runs.duplicated(["point_id", "cc", "rbuf"]).any()


def test_point_ids_follow_the_design_index_or_column() -> None:
    design = _design().iloc[[0, 2]]  # e.g. after dedupe: ids 0 and 2
    runs = cross(design, [Factor.categorical("cc", ["lia", "olia"])])
    assert sorted(set(runs["point_id"])) == [0, 2]
    with_column = design.reset_index()
    assert cross(with_column, {"cc": ["lia"]})["point_id"].tolist() == [0, 2]


def test_first_qualitative_factor_varies_slowest() -> None:
    runs = cross(_design(), {"cc": ["lia", "olia"], "pen": ["off", "on"]})
    assert runs["cc"].tolist()[:6] == ["lia"] * 6
    assert runs["pen"].tolist()[:6] == ["off"] * 3 + ["on"] * 3


@pytest.mark.parametrize(
    ("qualitative", "message"),
    [
        ({"rtt_ms": ["a"]}, "clash"),
        ([Factor.continuous("x", 0, 1)], "categorical"),
        ({"cc": []}, "at least one level"),
    ],
)
def test_bad_crossings(qualitative, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cross(_design(), qualitative)
